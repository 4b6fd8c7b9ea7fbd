import { randomBytes } from 'node:crypto';

/** An unguessable id with a readable prefix, e.g. `acct_3kq…` (128 bits of randomness, base62-ish). */
export function randomId(prefix: string, bytes = 16): string {
  return `${prefix}_${randomBytes(bytes)
    .toString('base64url')
    .replace(/[-_]/g, '')
    .slice(0, Math.ceil(bytes * 1.3))}`;
}
