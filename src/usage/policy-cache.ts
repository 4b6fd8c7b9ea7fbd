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

export class PolicyCache {
  private readonly storage: Storage;
  private readonly ttlMs: number;
  private readonly entries = new Map<string, { at: number; policies: Promise<Policies> }>();

  constructor(storage: Storage, ttlMs: number) {
    this.storage = storage;
    this.ttlMs = ttlMs;
  }

  get(accountId: string, keyId: string | null): Promise<Policies> {
    const cacheKey = `${accountId}\u0000${keyId ?? ''}`;
    const now = Date.now();
    const cached = this.entries.get(cacheKey);
    if (cached && now - cached.at < this.ttlMs) return cached.policies;
    const policies = Promise.all([this.storage.getBudgets(accountId, keyId), this.storage.getRateLimits(accountId, keyId)])
      .then(([budgets, limits]) => ({ budgets, limits }));
    // A failed read must not be cached: the next request asks the database again.
    policies.catch(() => this.entries.delete(cacheKey));
    if (this.ttlMs > 0) this.entries.set(cacheKey, { at: now, policies });
    if (this.entries.size > 100_000) this.entries.clear();
    return policies;
  }

  invalidate(): void {
    this.entries.clear();
  }
}
