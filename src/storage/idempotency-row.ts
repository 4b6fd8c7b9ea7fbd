/** An `idempotency_keys` row as both drivers return it, and its mapping to an `IdempotencyEntry`. */
import type { IdempotencyEntry, IdempotencyScope } from './types.js';
import { isoTime } from './usage-row.js';

export interface IdempotencyRow {
  account_id: string;
  route: string;
  idempotency_key: string;
  fingerprint: string;
  completion_id: string | null;
  status: number | null;
  /** JSON of the stored headers. */
  headers: string | null;
  body: Buffer | null;
  created_at: string | Date;
  expires_at: string | Date;
}

/** The WHERE clause naming one entry, with its values. */
export const idempotencyScopeClause = 'account_id = ? AND route = ? AND idempotency_key = ?';

export function idempotencyScopeValues(scope: IdempotencyScope): string[] {
  return [scope.accountId, scope.route, scope.key];
}

export function rowToIdempotencyEntry(row: IdempotencyRow): IdempotencyEntry {
  const { status, headers, body } = row;
  return {
    accountId: row.account_id,
    route: row.route,
    key: row.idempotency_key,
    fingerprint: row.fingerprint,
    completionId: row.completion_id,
    response: status !== null && headers !== null && body !== null ? { status, headers: JSON.parse(headers), body } : null,
    createdAt: isoTime(row.created_at),
    expiresAt: isoTime(row.expires_at),
  };
}
