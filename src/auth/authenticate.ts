/** Resolves the caller from its headers: key → account, with the optional account selector. */
import { GatewayError, storageUnavailable } from '../http/gateway-error.js';
import type { Account, Storage } from '../storage/types.js';
import { parseKey, secretMatches } from './api-keys.js';

export interface Caller {
  account: Account;
  keyId: string;
}

export interface AuthHeaders {
  authorization?: string;
  'x-api-key'?: string;
  'x-selected-account-id'?: string;
}

const unauthorized = (message: string) =>
  new GatewayError(message, { status: 401, type: 'authentication_error', code: 'invalid_api_key' });

/** Returns the presented key from `x-api-key` or `Authorization: Bearer`, or null. */
export function presentedKey(headers: AuthHeaders): string | null {
  const direct = headers['x-api-key'];
  if (typeof direct === 'string' && direct.length > 0) return direct.trim();
  const authorization = headers.authorization;
  if (typeof authorization === 'string') {
    const match = /^Bearer\s+(.+)$/i.exec(authorization.trim());
    if (match) return match[1].trim();
  }
  return null;
}

export async function authenticate(headers: AuthHeaders, storage: Storage): Promise<Caller> {
  const raw = presentedKey(headers);
  if (!raw) throw unauthorized("No API key: send 'x-api-key: KEY' or 'Authorization: Bearer KEY'.");
  const parsed = parseKey(raw);
  if (!parsed) throw unauthorized('Invalid API key.');
  const key = await storage.getKeyWithHash(parsed.id).catch((error: unknown) => { throw storageUnavailable(error); });
  if (!key || !secretMatches(parsed.secret, key.secretHash)) throw unauthorized('Invalid API key.');
  if (key.revokedAt) throw unauthorized('This API key has been revoked.');
  const selected = headers['x-selected-account-id'];
  if (typeof selected === 'string' && selected.length > 0 && selected !== key.accountId) {
    throw new GatewayError("'x-selected-account-id' does not match the account of this API key.", {
      status: 403, type: 'permission_error', code: 'account_mismatch',
    });
  }
  const account = await accountOf(storage, key.accountId);
  if (!account) throw unauthorized('Invalid API key.');
  return { account, keyId: key.id };
}

/**
 * Accounts are never deleted or renamed, so their records are cached per storage; keys are looked
 * up on every request so that a revocation takes effect at once, in every process.
 */
const accountCaches = new WeakMap<Storage, Map<string, Account>>();

async function accountOf(storage: Storage, accountId: string): Promise<Account | null> {
  let cache = accountCaches.get(storage);
  if (!cache) {
    cache = new Map();
    accountCaches.set(storage, cache);
  }
  const cached = cache.get(accountId);
  if (cached) return cached;
  const account = await storage.getAccount(accountId).catch((error: unknown) => { throw storageUnavailable(error); });
  if (account) {
    if (cache.size > 50_000) cache.clear();
    cache.set(accountId, account);
  }
  return account;
}
