/** What the dashboard shows that /v5/usage does not: recent requests, budget and rate-limit state, usage series. */
import { z } from 'zod';
import type { Storage, UsageGroup, UsageRecord, UsageTotals } from '../storage/types.js';
import { periodWindow } from '../usage/budget-periods.js';
import { invalidRequest } from '../errors/gateway-error.js';
export const recentSchema = z.strictObject({ limit: z.coerce.number().int().min(1).max(500).optional(), account_id: z.string().min(1).optional() });
export const seriesSchema = z.strictObject({
  bucket: z.enum(['day', 'hour'], { error: "'bucket' must be day or hour." }).optional(),
  days: z.coerce.number().int().min(1).max(60).optional(),
  account_id: z.string().min(1).optional(),
});
export const limitsSchema = z.strictObject({ account_id: z.string().min(1).optional() });

export function parseQuery<T>(schema: z.ZodType<T>, query: unknown): T {
  const result = schema.safeParse(query ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (issue.code === 'unrecognized_keys') throw invalidRequest(`Unknown query parameter '${issue.keys[0]}'.`, issue.keys[0], 'unknown_parameter');
  const param = String(issue.path[0] ?? '');
  throw invalidRequest(`Invalid '${param}': ${issue.message}`, param);
}

// ---------------------------------------------------------------- payloads

function recordToJson(record: UsageRecord) {
  return {
    request_id: record.requestId,
    account_id: record.accountId,
    key_id: record.keyId,
    model: record.model,
    vendor: record.vendor,
    prompt_tokens: record.promptTokens,
    completion_tokens: record.completionTokens,
    total_tokens: record.totalTokens,
    cached_tokens: record.cachedTokens,
    reasoning_tokens: record.reasoningTokens,
    estimated: record.estimated,
    stream: record.stream,
    outcome: record.outcome,
    status: record.status,
    error_code: record.errorCode,
    latency_ms: record.latencyMs,
    ttft_ms: record.ttftMs,
    created_at: record.createdAt,
  };
}

export async function recent(storage: Storage, accountId: string | undefined, limit: number) {
  const records = await storage.recentUsage({ accountId, limit });
  return { object: 'list', account_id: accountId ?? null, data: records.map(recordToJson) };
}

/** Budgets with what the ledger holds for their current period; rate limits with the last minute's use. */
async function limitsFor(storage: Storage, accountId: string, now: Date) {
  const [budgets, keys, lastMinute] = await Promise.all([
    storage.listBudgets(accountId),
    storage.listKeys(accountId),
    storage.queryUsage({ accountId, since: new Date(now.getTime() - 60_000).toISOString(), groupBy: 'key' }),
  ]);
  const budgetState = await Promise.all(
    budgets.map(async (budget) => {
      const window = periodWindow(budget.period, now);
      const used = await storage.sumTokens({ accountId, keyId: budget.keyId, since: window.since });
      return {
        account_id: accountId,
        key_id: budget.keyId,
        period: budget.period,
        tokens: budget.tokens,
        used,
        remaining: Math.max(0, budget.tokens - used),
        period_start: window.since ?? null,
        resets_at: window.endsAt === null ? null : new Date(window.endsAt).toISOString(),
      };
    }),
  );
  const scopes = [null, ...keys.map((key) => key.id)];
  const found = await Promise.all(scopes.map((keyId) => storage.getRateLimits(accountId, keyId)));
  const seen = new Set<string>();
  const rateLimits = [];
  for (const limit of found.flat()) {
    const scope = limit.keyId ? `key:${limit.keyId}` : `account:${accountId}`;
    if (seen.has(scope)) continue;
    seen.add(scope);
    const usage: UsageTotals | undefined = limit.keyId ? lastMinute.groups.find((group) => group.group === limit.keyId) : lastMinute.totals;
    rateLimits.push({
      account_id: limit.keyId ? null : accountId,
      key_id: limit.keyId,
      rpm: limit.rpm,
      tpm: limit.tpm,
      requests_last_minute: usage?.requests ?? 0,
      tokens_last_minute: usage?.totalTokens ?? 0,
    });
  }
  return {
    budgets: budgetState,
    rate_limits: rateLimits,
    keys: keys.map((key) => ({ id: key.id, name: key.name, prefix: key.prefix, revoked_at: key.revokedAt })),
  };
}

export async function limits(storage: Storage, accountIds: string[]) {
  const now = new Date();
  const parts = await Promise.all(accountIds.map((accountId) => limitsFor(storage, accountId, now)));
  return {
    object: 'limits',
    budgets: parts.flatMap((part) => part.budgets),
    rate_limits: parts.flatMap((part) => part.rate_limits),
    keys: parts.flatMap((part) => part.keys),
  };
}

/** Usage per bucket (UTC days, or the last 24 hours) split by model and by key, oldest bucket first. */
export async function series(storage: Storage, accountId: string | undefined, bucket: 'day' | 'hour', days: number) {
  const now = new Date();
  const stepMs = bucket === 'hour' ? 3_600_000 : 86_400_000;
  const count = bucket === 'hour' ? 24 : days;
  const lastStart =
    bucket === 'hour'
      ? Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), now.getUTCHours())
      : Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const starts = Array.from({ length: count }, (_, index) => lastStart - (count - 1 - index) * stepMs);
  const group = (groups: UsageGroup[]) =>
    groups.map((entry) => ({
      group: entry.group,
      requests: entry.requests,
      prompt_tokens: entry.promptTokens,
      completion_tokens: entry.completionTokens,
      total_tokens: entry.totalTokens,
    }));
  const buckets = await Promise.all(
    starts.map(async (start) => {
      const since = new Date(start).toISOString();
      const until = new Date(start + stepMs).toISOString();
      const [byModel, byKey] = await Promise.all([
        storage.queryUsage({ accountId, since, until, groupBy: 'model' }),
        storage.queryUsage({ accountId, since, until, groupBy: 'key' }),
      ]);
      return {
        start: since,
        requests: byModel.totals.requests,
        total_tokens: byModel.totals.totalTokens,
        by_model: group(byModel.groups),
        by_key: group(byKey.groups),
      };
    }),
  );
  return { object: 'usage_series', account_id: accountId ?? null, bucket, since: buckets[0].start, until: new Date(lastStart + stepMs).toISOString(), buckets };
}
