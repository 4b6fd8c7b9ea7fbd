import { randomBytes } from 'node:crypto';

/** `cmpl-` + 24 unguessable characters; also the ledger's request id. */
export function completionId(): string {
  return `cmpl-${randomBytes(18).toString('base64url')}`;
}

/** Identifies the gateway build in `system_fingerprint` when the vendor gives none. */
export const GATEWAY_FINGERPRINT = 'fp_tollgate_0_1';
