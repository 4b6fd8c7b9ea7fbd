import { randomBytes } from 'node:crypto';

const POOL_SIZE = 18 * 512;
let pool = randomBytes(POOL_SIZE);
let offset = 0;

/** `cmpl-` + 24 unguessable characters (144 random bits); also the ledger's request id. */
export function completionId(): string {
  // One CSPRNG call per 512 ids instead of one per request.
  if (offset + 18 > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  const id = pool.toString('base64url', offset, offset + 18);
  offset += 18;
  return `cmpl-${id}`;
}

/** Identifies the gateway build in `system_fingerprint` when the vendor gives none. */
export const GATEWAY_FINGERPRINT = 'fp_tollgate_0_1';
