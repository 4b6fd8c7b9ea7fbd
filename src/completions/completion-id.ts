import { randomBytes } from 'node:crypto';

/**
 * `cmpl-` + the creation time (8 base-36 digits of epoch milliseconds, which sort as text) + 24
 * unguessable characters (144 random bits). It is also the ledger's request id: ids that grow with
 * time land next to each other in the ledger's index, so a batch of inserts touches one page
 * instead of one random page each.
 */
export function completionId(): string {
  return `cmpl-${Date.now().toString(36).padStart(8, '0')}${randomBytes(18).toString('base64url')}`;
}

/** Identifies the gateway build in `system_fingerprint` when the vendor gives none. */
export const GATEWAY_FINGERPRINT = 'fp_tollgate_0_1';
