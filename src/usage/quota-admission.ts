/**
 * Admission with rate limits (requests and tokens per minute, as token buckets that refill
 * continuously) and token budgets (day, month or total), over a CounterStore. A request reserves
 * the most it can use before any upstream call and settles to the actual count when it ends.
 */
import cluster from 'node:cluster';
import type { Config } from '../config/config.js';
import { GatewayError, serviceUnavailable } from '../errors/gateway-error.js';
import type { Logger } from '../observability/logger.js';
import { formatUsd } from '../config/prices.js';
import type { BudgetUnit, Storage } from '../storage/types.js';
import type { ActualUse, Admission, AdmissionRequest, AdmissionTicket } from './admission.js';
import { periodWindow } from './budget-periods.js';
import { MemoryCounterStore, type CounterReservation, type CounterStore } from './counter-store.js';
import { PrimaryCounterStore } from './primary-counter-store.js';
import { PolicyCache } from './policy-cache.js';

/** Admission over Redis's counters when REDIS_URL is set, else the cluster primary's in a worker, else this process's own. */
export async function createAdmission(config: Config, storage: Storage, logger: Logger): Promise<QuotaAdmission> {
  let counters: CounterStore;
  if (config.redisUrl) {
    // Loaded only when configured: the Redis client costs memory a single instance never needs.
    const { RedisCounterStore } = await import('./redis-counter-store.js');
    const redis = new RedisCounterStore(config.redisUrl, logger);
    await redis.ready().catch((error: Error) => logger.warn({ err: error.message }, 'starting without redis; admission answers 503 until it connects'));
    counters = redis;
  } else counters = cluster.isWorker ? new PrimaryCounterStore() : new MemoryCounterStore();
  return new QuotaAdmission({ counters, storage, logger, policyCacheMs: config.policyCacheMs });
}

/** A rate counter (rpm or tpm): its drain is always set. */
interface RateReservation extends CounterReservation {
  drainPerMs: number;
}

/** `settles`: what the reservation is settled with (a request counter keeps its 1). */
type Reserved =
  | { kind: 'requests' | 'tokens'; item: RateReservation; settles: 'tokens' | null }
  | { kind: 'budget'; unit: BudgetUnit; item: CounterReservation; settles: BudgetUnit };

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
      this.logger.warn({ requestId: request.requestId, completionId: request.completionId, err: (error as Error).message }, 'admission state unavailable');
      throw serviceUnavailable('Rate-limit and budget state is unavailable right now; retry shortly.', 'quota_state_unavailable', error);
    }
  }

  private async admitOrThrow(request: AdmissionRequest): Promise<AdmissionTicket> {
    const policies = await this.policies.get(request.accountId, request.keyId);
    if (policies.budgets.length === 0 && policies.limits.length === 0) return { headers: {}, settle: async () => {} };
    const now = Date.now();
    const reserved: Reserved[] = [];
    for (const limit of policies.limits) {
      const scope = limit.keyId ? `key:${limit.keyId}` : `account:${limit.accountId}`;
      if (limit.rpm != null) reserved.push({ kind: 'requests', settles: null, item: rate(`rpm:${scope}`, 1, limit.rpm) });
      if (limit.tpm != null) reserved.push({ kind: 'tokens', settles: 'tokens', item: rate(`tpm:${scope}`, request.maxTokens, limit.tpm) });
    }
    // More than a whole limit (max_tokens over the tpm, or a limit of 0) can never pass: say so
    // before touching the ledger or the counters.
    const impossible = reserved.find((entry) => entry.item.amount > entry.item.limit || entry.item.limit <= 0);
    if (impossible) throw neverPasses(impossible);
    for (const budget of policies.budgets) {
      if (budget.unit === 'usd' && request.unpricedModel !== null) throw unpriced(request.unpricedModel);
      const window = periodWindow(budget.period, new Date(now));
      const scope = budget.keyId ? `key:${budget.keyId}` : `account:${budget.accountId}`;
      const key = `${budget.unit === 'usd' ? 'budget-usd' : 'budget'}:${scope}:${window.key}`;
      if (!(await this.counters.has(key))) {
        const used = await this.storage.sumUsage({ accountId: budget.accountId, keyId: budget.keyId, since: window.since, unit: budget.unit });
        await this.counters.seed(key, used, window.endsAt);
      }
      const amount = budget.unit === 'usd' ? request.maxCostNanoUsd : request.maxTokens;
      reserved.push({ kind: 'budget', unit: budget.unit, settles: budget.unit, item: { key, amount, limit: budget.limit, expiresAt: window.endsAt } });
    }
    const result = await this.counters.tryReserve(
      reserved.map((entry) => entry.item),
      now,
    );
    if (!result.ok) throw this.refusal(reserved[result.index], result.value, now);
    const headers = rateLimitHeaders(reserved, result.values);
    let settled = false;
    return {
      headers,
      settle: async (actual: ActualUse) => {
        if (settled) return;
        settled = true;
        const used = { tokens: actual.tokens, usd: actual.costNanoUsd };
        const corrections = [];
        for (const entry of reserved) {
          // A cost that is not known keeps its reservation: a budget never counts less than could have been spent.
          const actualAmount = entry.settles === null ? null : used[entry.settles];
          if (actualAmount === null || actualAmount === entry.item.amount) continue;
          corrections.push({
            key: entry.item.key,
            amount: actualAmount - entry.item.amount,
            expiresAt: entry.item.expiresAt,
            drainPerMs: entry.item.drainPerMs,
          });
        }
        if (corrections.length === 0) return;
        try {
          await this.counters.add(corrections, Date.now());
        } catch (error) {
          // The ledger stays exact; only the counters are off until they expire or are re-seeded.
          this.logger.error(
            { requestId: request.requestId, completionId: request.completionId, err: (error as Error).message },
            'could not settle quota counters',
          );
        }
      },
    };
  }

  private refusal(entry: Reserved, value: number, now: number): GatewayError {
    const { limit, amount, expiresAt } = entry.item;
    if (entry.kind === 'budget') {
      const usd = entry.unit === 'usd';
      const show = (units: number) => (usd ? `$${formatUsd(units)}` : `${units} tokens`);
      const could = `This request could ${usd ? 'cost' : 'use'} up to ${show(amount)}`;
      const lower = 'Lower max_tokens, n or best_of, or raise the budget.';
      const left = usd ? `${show(Math.max(0, limit - value))} of ${show(limit)} left` : `${Math.max(0, limit - value)} of ${limit} left`;
      const budget = usd ? 'USD budget' : 'budget';
      // Waiting helps only when the budget resets and this request fits a whole period of it.
      if (amount > limit) return tooMany(`${could}, more than the whole ${budget} of ${show(limit)}, so it can never pass. ${lower}`, 'budget', false);
      if (expiresAt === null) return tooMany(`${could}, but the total ${budget}, which never resets, has ${left}. ${lower}`, 'budget', false);
      const retryAfter = String(Math.max(1, Math.ceil((expiresAt - now) / 1000)));
      return tooMany(`${could}, but the ${usd ? 'USD' : 'token'} budget has ${left} for this period. ${lower}`, 'budget', true, { 'retry-after': retryAfter });
    }
    const what = entry.kind;
    // The bucket refills continuously: retry once enough of it has drained for this request.
    const retrySeconds = Math.max(1, Math.ceil((value + amount - limit) / entry.item.drainPerMs / 1000));
    return tooMany(
      `Rate limit reached: ${limit} ${what} per minute (${remainingOf(limit, value)} left now, this request needs ${amount}). Retry in ${retrySeconds}s.`,
      'rate',
      true,
      {
        'retry-after': String(retrySeconds),
        [`x-ratelimit-limit-${what}`]: String(limit),
        [`x-ratelimit-remaining-${what}`]: String(remainingOf(limit, value)),
        [`x-ratelimit-reset-${what}`]: resetOf(value, entry.item),
      },
    );
  }

  async close(): Promise<void> {
    await this.counters.close();
  }
}

function neverPasses(entry: Reserved): GatewayError {
  const { limit, amount } = entry.item;
  const message =
    entry.kind === 'requests'
      ? `The rate limit here is ${limit} requests per minute: no request can pass until an administrator raises it.`
      : `This request could use up to ${amount} tokens, more than the limit of ${limit} tokens per minute, so it can never pass. Lower max_tokens, n or best_of, or raise the limit.`;
  return tooMany(message, 'rate', false, { [`x-ratelimit-limit-${entry.kind}`]: String(limit), [`x-ratelimit-remaining-${entry.kind}`]: '0' });
}

/** A USD budget applies, and the request may be routed to a model whose cost the gateway cannot tell. */
function unpriced(model: string): GatewayError {
  return new GatewayError(
    `A budget in USD applies to this request, but '${model}' has no price, so its cost could not be kept within the budget. Choose a priced model, or ask an administrator to add '${model}' under 'prices' in the config file.`,
    { status: 403, type: 'permission_error', param: 'model', code: 'model_not_priced' },
  );
}

/** A 429: `insufficient_quota` for a budget, `rate_limit_exceeded` for a rate limit. */
function tooMany(message: string, what: 'budget' | 'rate', retryable: boolean, headers?: Record<string, string>): GatewayError {
  const budget = what === 'budget';
  return new GatewayError(message, {
    status: 429,
    type: budget ? 'insufficient_quota' : 'rate_limit_error',
    code: budget ? 'insufficient_quota' : 'rate_limit_exceeded',
    retryable,
    headers,
  });
}

/** A per-minute limit as a rate counter: a bucket of `limit` that refills by `limit` a minute. */
function rate(key: string, amount: number, limit: number): RateReservation {
  return { key, amount, limit, expiresAt: null, drainPerMs: limit / MINUTE };
}

/** Whole units left: a bucket at 6.4 of 7 has room for 0 more requests, not 0.6. */
function remainingOf(limit: number, value: number): number {
  return Math.max(0, Math.floor(limit - value));
}

/** OpenAI's reset header: the time until the bucket is back to its full limit, e.g. "8.6s". */
function resetOf(value: number, item: RateReservation): string {
  return `${Math.max(0, Math.ceil(value / item.drainPerMs / 100) / 10)}s`;
}

/** OpenAI's x-ratelimit-* headers, for the most constrained requests and tokens limits. */
function rateLimitHeaders(reserved: Reserved[], values: number[]): Record<string, string> {
  const headers: Record<string, string> = {};
  const remaining = (index: number) => remainingOf(reserved[index].item.limit, values[index]);
  for (const kind of ['requests', 'tokens'] as const) {
    let best = -1;
    for (let index = 0; index < reserved.length; index++) {
      if (reserved[index].kind === kind && (best < 0 || remaining(index) < remaining(best))) best = index;
    }
    if (best < 0) continue;
    const entry = reserved[best];
    if (entry.kind === 'budget') continue;
    headers[`x-ratelimit-limit-${kind}`] = String(entry.item.limit);
    headers[`x-ratelimit-remaining-${kind}`] = String(remaining(best));
    headers[`x-ratelimit-reset-${kind}`] = resetOf(values[best], entry.item);
  }
  return headers;
}
