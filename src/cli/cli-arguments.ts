/** Parsers of command-line argument values shared by the commands. */
import { InvalidArgumentError } from 'commander';

export function positiveInteger(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0) throw new InvalidArgumentError('must be a non-negative integer');
  return number;
}

/** An account name, held to what `POST /admin/accounts` accepts: 1 to 200 characters. */
export function accountName(value: string): string {
  if (value.length < 1 || value.length > 200) throw new InvalidArgumentError('must be 1 to 200 characters');
  return value;
}

/** A key's label, held to what `POST /admin/keys` accepts: at most 200 characters. */
export function keyLabel(value: string): string {
  if (value.length > 200) throw new InvalidArgumentError('must be at most 200 characters');
  return value;
}
