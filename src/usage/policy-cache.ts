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
  /** By `account key` (the key part empty for the account's own policies). */
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly storage: Storage,
    private readonly ttlMs: number,
  ) {}

  get(accountId: string, keyId: string | null): Promise<Policies> {
    const now = Date.now();
    const cacheKey = `${accountId} ${keyId ?? ''}`;
    const cached = this.entries.get(cacheKey);
    if (cached && now - cached.at < this.ttlMs) return cached.policies;
    const policies = Promise.all([this.storage.getBudgets(accountId, keyId), this.storage.getRateLimits(accountId, keyId)]).then(([budgets, limits]) => ({
      budgets,
      limits,
    }));
    if (this.ttlMs <= 0) return policies;
    if (this.entries.size >= 100_000) this.invalidate();
    const entry: Entry = { at: now, policies };
    this.entries.set(cacheKey, entry);
    // A failed read must not be cached: the next request asks the database again.
    policies.catch(() => {
      if (this.entries.get(cacheKey) === entry) this.entries.delete(cacheKey);
    });
    return policies;
  }

  invalidate(): void {
    this.entries.clear();
  }
}
