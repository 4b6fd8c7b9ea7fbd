import { randomBytes } from 'node:crypto';

const POOL_SIZE = 18 * 512;
let pool = randomBytes(POOL_SIZE);
let offset = 0;

/**
 * `cmpl-` (`chatcmpl-` for a chat completion) + the creation time (8 base-36 digits of epoch milliseconds, which sort as text) + 24
 * unguessable characters (144 random bits). It is also the ledger's request id: ids that grow with
 * time land next to each other in the ledger's index, so a batch of inserts touches one page
 * instead of one random page each. The random bytes are drawn 512 ids at a time, as
 * `crypto.randomUUID` does for its own.
 */
export function completionId(prefix: 'cmpl-' | 'chatcmpl-' = 'cmpl-'): string {
  if (offset + 18 > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  const random = pool.toString('base64url', offset, offset + 18);
  offset += 18;
  return `${prefix}${Date.now().toString(36).padStart(8, '0')}${random}`;
}
