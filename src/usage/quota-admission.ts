/**
 * Admission with rate limits (fixed one-minute windows, requests and tokens) and token budgets
 * (day, month or total), over a CounterStore. A request reserves the most it can use before any
 * upstream call and settles to the actual count when it ends.
 */
import { GatewayError } from '../http/gateway-error.js';
import type { Logger } from '../observability/logger.js';
import type { Storage } from '../storage/types.js';
import type { Admission, AdmissionRequest, AdmissionTicket } from './admission.js';
import { periodWindow } from './budget-periods.js';
import type { CounterReservation, CounterStore } from './counter-store.js';
import { PolicyCache } from './policy-cache.js';

interface Reserved {
  item: CounterReservation;
  kind: 'requests' | 'tokens' | 'budget';
  /** Tokens reserved (to settle); 0 for request counters. */
  tokens: number;
}

const MINUTE = 60_000;

export class QuotaAdmission implements Admission {
  private readonly counters: CounterStore;
  private readonly storage: Storage;
  private readonly policies: PolicyCache;
  private readonly logger: Logger;

  constructor(options: { counters: CounterStore; storage: Storage; logger: Logger; policyCacheMs: number }) {
    this.counters = options.counters;
    this.storage = options.storage;
    this.logger = options.logger;
    this.policies = new PolicyCache(options.storage, options.policyCacheMs);
  }

  invalidatePolicies(): void {
    this.policies.invalidate();
  }

  async admit(request: AdmissionRequest): Promise<AdmissionTicket> {
    try {
      return await this.admitOrThrow(request);
    } catch (error) {
      if (error instanceof GatewayError) throw error;
      // Without the counters we cannot tell whether the request is within its limits: refuse, never run unmetered.
      this.logger.warn({ err: (error as Error).message }, 'admission state unavailable');
      throw new GatewayError('Rate-limit and budget state is unavailable right now; retry shortly.', {
        status: 503, type: 'service_unavailable', code: 'quota_state_unavailable', headers: { 'retry-after': '1' }, cause: error,
      });
    }
  }

  private async admitOrThrow(request: AdmissionRequest): Promise<AdmissionTicket> {
    const policies = await this.policies.get(request.accountId, request.keyId);
    if (policies.budgets.length === 0 && policies.limits.length === 0) return { headers: {}, settle: async () => {} };
    const now = Date.now();
    const minute = Math.floor(now / MINUTE);
    const windowEnd = (minute + 1) * MINUTE;
    const reserved: Reserved[] = [];
    for (const limit of policies.limits) {
      const scope = limit.keyId ? `key:${limit.keyId}` : `account:${limit.accountId}`;
      if (limit.rpm != null) reserved.push({ kind: 'requests', tokens: 0, item: { key: `rpm:${scope}:${minute}`, amount: 1, limit: limit.rpm, expiresAt: windowEnd } });
      if (limit.tpm != null) reserved.push({ kind: 'tokens', tokens: request.maxTokens, item: { key: `tpm:${scope}:${minute}`, amount: request.maxTokens, limit: limit.tpm, expiresAt: windowEnd } });
    }
    for (const budget of policies.budgets) {
      const window = periodWindow(budget.period, new Date(now));
      const scope = budget.keyId ? `key:${budget.keyId}` : `account:${budget.accountId}`;
      const key = `budget:${scope}:${window.key}`;
      if (!(await this.counters.has(key))) {
        const used = await this.storage.sumTokens({ accountId: budget.accountId, keyId: budget.keyId, since: window.since });
        await this.counters.seed(key, used, window.endsAt);
      }
      reserved.push({ kind: 'budget', tokens: request.maxTokens, item: { key, amount: request.maxTokens, limit: budget.tokens, expiresAt: window.endsAt } });
    }
    const result = await this.counters.tryReserve(reserved.map((entry) => entry.item));
    if (!result.ok) throw this.refusal(reserved[result.index], result.value, request.maxTokens, now);
    const headers = rateLimitHeaders(reserved, result.values, windowEnd - now);
    let settled = false;
    return {
      headers,
      settle: async (actualTokens: number) => {
        if (settled) return;
        settled = true;
        const corrections = reserved
          .filter((entry) => entry.tokens > 0)
          .map((entry) => ({ key: entry.item.key, amount: actualTokens - entry.tokens, expiresAt: entry.item.expiresAt }));
        if (corrections.length === 0) return;
        try {
          await this.counters.add(corrections);
        } catch (error) {
          // The ledger stays exact; only the counters are off until they expire or are re-seeded.
          this.logger.error({ err: (error as Error).message }, 'could not settle quota counters');
        }
      },
    };
  }

  private refusal(entry: Reserved, value: number, wanted: number, now: number): GatewayError {
    if (entry.kind === 'budget') {
      const endsAt = entry.item.expiresAt;
      const remaining = Math.max(0, entry.item.limit - value);
      return new GatewayError(
        `This request could use up to ${wanted} tokens, but the token budget has ${remaining} of ${entry.item.limit} left for this period. Lower max_tokens, n or best_of, or raise the budget.`,
        {
          status: 429, type: 'insufficient_quota', code: 'insufficient_quota',
          headers: { 'x-should-retry': 'false', ...(endsAt ? { 'retry-after': String(Math.ceil((endsAt - now) / 1000)) } : {}) },
        },
      );
    }
    const resetSeconds = Math.max(1, Math.ceil(((entry.item.expiresAt ?? now) - now) / 1000));
    const what = entry.kind === 'requests' ? 'requests' : 'tokens';
    return new GatewayError(`Rate limit reached: ${entry.item.limit} ${what} per minute (used ${value}). Retry in ${resetSeconds}s.`, {
      status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded',
      headers: { 'retry-after': String(resetSeconds), [`x-ratelimit-limit-${what}`]: String(entry.item.limit), [`x-ratelimit-remaining-${what}`]: String(Math.max(0, entry.item.limit - value)), [`x-ratelimit-reset-${what}`]: `${resetSeconds}s` },
    });
  }

  async close(): Promise<void> {
    await this.counters.close();
  }
}

/** OpenAI's x-ratelimit-* headers, for the most constrained requests and tokens windows. */
function rateLimitHeaders(reserved: Reserved[], values: number[], resetMs: number): Record<string, string> {
  const headers: Record<string, string> = {};
  const reset = `${Math.max(0, Math.ceil(resetMs / 100) / 10)}s`;
  for (const kind of ['requests', 'tokens'] as const) {
    let best: { limit: number; remaining: number } | null = null;
    reserved.forEach((entry, index) => {
      if (entry.kind !== kind) return;
      const remaining = Math.max(0, entry.item.limit - values[index]);
      if (!best || remaining < best.remaining) best = { limit: entry.item.limit, remaining };
    });
    if (best) {
      const chosen = best as { limit: number; remaining: number };
      headers[`x-ratelimit-limit-${kind}`] = String(chosen.limit);
      headers[`x-ratelimit-remaining-${kind}`] = String(chosen.remaining);
      headers[`x-ratelimit-reset-${kind}`] = reset;
    }
  }
  return headers;
}
