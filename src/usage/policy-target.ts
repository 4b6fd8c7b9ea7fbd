/**
 * What an admin command or request names must exist. A budget or rate limit is set for an account,
 * or one key (of that account, when both are given): storage keeps a policy for any id, and one
 * whose account or key does not exist, or whose key belongs to another account, would never apply.
 * A usage report or key list for a mistyped account would read as zeros. So the CLI and the admin
 * API check first.
 */
import { invalidRequest } from '../errors/gateway-error.js';
import type { Storage } from '../storage/types.js';

export interface PolicyTarget {
  accountId: string | null;
  keyId: string | null;
}

/** Throws a 400 naming `account_id` unless the account exists. */
export async function requireAccount(storage: Storage, accountId: string): Promise<void> {
  if (!(await storage.getAccount(accountId))) throw invalidRequest(`No account '${accountId}'.`, 'account_id', 'account_not_found');
}

/** Throws a 400 naming `account_id` or `key_id` unless the target exists (and the key is the account's). */
export async function requirePolicyTarget(storage: Storage, target: PolicyTarget): Promise<void> {
  const { accountId, keyId } = target;
  if (accountId !== null) await requireAccount(storage, accountId);
  if (keyId === null) return;
  const key = await storage.getKeyWithHash(keyId);
  if (!key) throw invalidRequest(`No key '${keyId}'.`, 'key_id', 'key_not_found');
  if (accountId !== null && key.accountId !== accountId) {
    throw invalidRequest(`Key '${keyId}' belongs to another account than '${accountId}'.`, 'key_id', 'key_not_found');
  }
}
