/**
 * Budgets and rate limits of an account/key, read from storage and kept for a short while so
 * the hot path does not query the database on every request. Changes made through this process's
 * admin API are visible at once (invalidate); changes from other processes within `ttlMs`.
 */
import type { Budget, RateLimit, Storage } from '../storage/types.js';

export interface Policies {
  budgets: Budget[];
  limits: RateLimit[];
}

interface Entry {
  at: number;
  policies: Promise<Policies>;
}

export class PolicyCache {
  private readonly storage: Storage;
  private readonly ttlMs: number;
  /**
   * By account, then key (`null`: the account's own policies). Nested rather than one map keyed by
   * a joined string: the ids are the cached caller's own strings, whose hashes V8 keeps, where a
   * joined key was a new string to hash on every request.
   */
  private readonly entries = new Map<string, Map<string | null, Entry>>();
  private size = 0;

  constructor(storage: Storage, ttlMs: number) {
    this.storage = storage;
    this.ttlMs = ttlMs;
  }

  get(accountId: string, keyId: string | null): Promise<Policies> {
    const now = Date.now();
    let byKey = this.entries.get(accountId);
    const cached = byKey?.get(keyId);
    if (cached && now - cached.at < this.ttlMs) return cached.policies;
    const policies = Promise.all([this.storage.getBudgets(accountId, keyId), this.storage.getRateLimits(accountId, keyId)]).then(([budgets, limits]) => ({
      budgets,
      limits,
    }));
    if (this.ttlMs <= 0) return policies;
    if (this.size >= 100_000) {
      this.invalidate();
      byKey = undefined;
    }
    if (!byKey) {
      byKey = new Map();
      this.entries.set(accountId, byKey);
    }
    const entry: Entry = { at: now, policies };
    if (!byKey.has(keyId)) this.size++;
    byKey.set(keyId, entry);
    // A failed read must not be cached: the next request asks the database again.
    policies.catch(() => {
      const current = this.entries.get(accountId);
      if (current?.get(keyId) !== entry) return;
      current.delete(keyId);
      this.size--;
    });
    return policies;
  }

  invalidate(): void {
    this.entries.clear();
    this.size = 0;
  }
}
