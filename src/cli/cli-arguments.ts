/** Parsers of command-line argument values shared by the commands. */
import { InvalidArgumentError } from 'commander';

export function positiveInteger(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0) throw new InvalidArgumentError('must be a non-negative integer');
  return number;
}
