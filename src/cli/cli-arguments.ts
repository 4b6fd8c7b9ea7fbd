/** Parsers of command-line argument values shared by the commands. */
import { InvalidArgumentError } from 'commander';
import { MAX_EXACT_USD, usdToNano } from '../config/prices.js';

export function positiveInteger(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0) throw new InvalidArgumentError('must be a non-negative integer');
  return number;
}

/** A per-minute limit: a non-negative integer, or `unlimited` to remove it. */
export function limitValue(value: string): number | 'unlimited' {
  return value === 'unlimited' ? value : positiveInteger(value);
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

/** A sum in US dollars (`12.50`), as whole nanodollars: non-negative, at most nine decimals. */
export function usdAmount(value: string): number {
  const usd = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || !Number.isFinite(usd)) throw new InvalidArgumentError('must be an amount in US dollars, such as 12.50');
  if (usd > MAX_EXACT_USD) throw new InvalidArgumentError(`must be at most ${MAX_EXACT_USD}: larger sums are not exact`);
  try {
    return usdToNano(usd);
  } catch {
    throw new InvalidArgumentError('must have at most nine decimals');
  }
}
