/** Resolves the caller from its headers: key → account, with the optional account selector. */
import { GatewayError } from '../errors/gateway-error.js';
import type { Account, Storage } from '../storage/types.js';
import { parseKey, secretMatches } from './api-keys.js';

export interface Caller {
  account: Account;
  keyId: string;
}

/** The request headers auth reads; Node's incoming headers fit as they are (a repeated header is an array and is ignored). */
export interface AuthHeaders {
  authorization?: string;
  'x-api-key'?: string | string[];
  'x-selected-account-id'?: string | string[];
}

const unauthorized = (message: string) => new GatewayError(message, { status: 401, type: 'authentication_error', code: 'invalid_api_key' });

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

function checkSelected(headers: AuthHeaders, caller: Caller): Caller {
  const selected = headers['x-selected-account-id'];
  if (typeof selected === 'string' && selected.length > 0 && selected !== caller.account.id) {
    throw new GatewayError("'x-selected-account-id' does not match the account of this API key.", {
      status: 403,
      type: 'permission_error',
      code: 'account_mismatch',
    });
  }
  return caller;
}

interface CachedCaller {
  caller: Caller;
  expiresAt: number;
}

/** Bounds the cache against a flood of distinct valid keys; it is emptied, never grows past this. */
const maxCachedKeys = 10_000;

/**
 * Checks presented keys against storage. A key that passed is remembered for `cacheMs` (keyed by
 * the exact presented string, so a hit needs neither the database nor a hash). A revocation through
 * this process's storage drops the entry at once; one made by another process (the CLI, another
 * instance) takes effect when the entry expires. `cacheMs` 0 looks every key up on every request.
 * Failed or revoked keys are never cached.
 */
export class Authenticator {
  private readonly keys = new Map<string, CachedCaller>();
  /** keyId → the presented strings cached for it, for revocation. */
  private readonly presentedById = new Map<string, string>();
  private readonly accounts = new Map<string, Account>();
  private readonly unwatch: () => void;

  constructor(
    private readonly storage: Storage,
    private readonly cacheMs: number,
  ) {
    this.unwatch = storage.watchKeys((keyId) => this.forget(keyId));
  }

  /** The caller, synchronously when the key is cached (the common case); throws 401/403 GatewayErrors. */
  authenticate(headers: AuthHeaders): Caller | Promise<Caller> {
    const raw = presentedKey(headers);
    if (!raw) throw unauthorized("No API key: send 'x-api-key: KEY' or 'Authorization: Bearer KEY'.");
    const cached = this.keys.get(raw);
    if (cached !== undefined && cached.expiresAt > performance.now()) return checkSelected(headers, cached.caller);
    if (cached !== undefined) this.forget(cached.caller.keyId);
    return this.lookUp(raw).then((caller) => checkSelected(headers, caller));
  }

  close(): void {
    this.unwatch();
  }

  private async lookUp(raw: string): Promise<Caller> {
    const parsed = parseKey(raw);
    if (!parsed) throw unauthorized('Invalid API key.');
    // Storage answers a database it cannot reach with the 503 storage_unavailable itself.
    const key = await this.storage.getKeyWithHash(parsed.id);
    if (!key || !secretMatches(parsed.secret, key.secretHash)) throw unauthorized('Invalid API key.');
    if (key.revokedAt) throw unauthorized('This API key has been revoked.');
    const account = await this.accountOf(key.accountId);
    if (!account) throw unauthorized('Invalid API key.');
    const caller: Caller = { account, keyId: key.id };
    if (this.cacheMs > 0) {
      if (this.keys.size >= maxCachedKeys) {
        this.keys.clear();
        this.presentedById.clear();
      }
      this.keys.set(raw, { caller, expiresAt: performance.now() + this.cacheMs });
      this.presentedById.set(key.id, raw);
    }
    return caller;
  }

  private forget(keyId: string): void {
    const raw = this.presentedById.get(keyId);
    if (raw === undefined) return;
    this.presentedById.delete(keyId);
    this.keys.delete(raw);
  }

  /** Accounts are never deleted or renamed, so their records are kept. */
  private async accountOf(accountId: string): Promise<Account | null> {
    const cached = this.accounts.get(accountId);
    if (cached) return cached;
    const account = await this.storage.getAccount(accountId);
    if (account) {
      if (this.accounts.size > 50_000) this.accounts.clear();
      this.accounts.set(accountId, account);
    }
    return account;
  }
}
