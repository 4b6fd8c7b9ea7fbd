/**
 * The dashboard's routes: the JSON the UI needs under /v5/dashboard (the caller's own account
 * only), the same under /admin/dashboard (any account; only when TOLLGATE_ADMIN_KEY is set), and
 * the built UI at /dashboard/ and /playground/. What /v5/usage already answers is not repeated:
 * recent requests, budget and rate-limit state, and usage series.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Config } from '../config/config.js';
import type { Storage, UsageGroup, UsageRecord, UsageTotals } from '../storage/types.js';
import { usageColumns, usageFields } from '../storage/usage-row.js';
import { budgetStates } from '../usage/budget-state.js';
import { GatewayError } from '../errors/gateway-error.js';
import { requireAdminKey } from './admin-routes.js';
import { requireAccount } from '../usage/policy-target.js';
import { callerOf } from './api-key-auth.js';
import { defaultUiDir, registerStaticUi } from './dashboard-static.js';
import { parseInput } from './parse-input.js';
import { usageCounts, usdOf } from './usage-route.js';

export interface DashboardRouteOptions {
  storage: Storage;
  config: Config;
  /** The built UI; default `dist/ui` of this package. */
  uiDir?: string;
}

const recentSchema = z.strictObject({ limit: z.coerce.number().int().min(1).max(500).optional(), account_id: z.string().min(1).optional() });
const seriesSchema = z.strictObject({
  bucket: z.enum(['day', 'hour'], { error: 'must be day or hour.' }).optional(),
  days: z.coerce.number().int().min(1).max(60).optional(),
  account_id: z.string().min(1).optional(),
});
const limitsSchema = z.strictObject({ account_id: z.string().min(1).optional() });

/** The account a request may read given its `account_id`: one account, or undefined for every account. */
type AccountScope = (request: FastifyRequest, accountId: string | undefined) => Promise<string | undefined>;

/** Registers /v5/dashboard/*; call inside the /v5 plugin so its auth hook sets `request.caller`. */
export function registerDashboardApi(v5: FastifyInstance, storage: Storage): void {
  v5.get('/v5/dashboard/me', async (request) => {
    const { account, keyId } = callerOf(request);
    return { object: 'caller', account: { id: account.id, name: account.name, created_at: account.createdAt }, key_id: keyId };
  });
  registerDataRoutes(v5, '/v5/dashboard', storage, async (request, accountId) => {
    const own = callerOf(request).account.id;
    if (accountId !== undefined && accountId !== own) {
      throw new GatewayError("'account_id' must be your own account; use the admin dashboard for others.", {
        status: 403,
        type: 'permission_error',
        param: 'account_id',
        code: 'account_mismatch',
      });
    }
    return own;
  });
}

/** Registers the UI, and /admin/dashboard/* when the admin key is set. */
export function registerDashboardRoutes(app: FastifyInstance, options: DashboardRouteOptions): void {
  const { storage, config } = options;
  registerStaticUi(app, options.uiDir ?? defaultUiDir());
  const adminKey = config.adminKey;
  if (!adminKey) return;
  app.register(async (admin) => {
    admin.addHook('onRequest', requireAdminKey(adminKey));
    admin.get('/admin/dashboard/accounts', async () => {
      const accounts = await storage.listAccounts();
      return { object: 'list', data: accounts.map((account) => ({ id: account.id, name: account.name, created_at: account.createdAt })) };
    });
    registerDataRoutes(admin, '/admin/dashboard', storage, async (_request, accountId) => {
      if (accountId !== undefined) await requireAccount(storage, accountId);
      return accountId;
    });
  });
}

function registerDataRoutes(app: FastifyInstance, prefix: string, storage: Storage, scope: AccountScope): void {
  app.get(`${prefix}/recent`, async (request) => {
    const query = parseInput(recentSchema, request.query, 'query');
    const accountId = await scope(request, query.account_id);
    const records = await storage.recentUsage({ accountId, limit: query.limit ?? 50 });
    return { object: 'list', account_id: accountId ?? null, data: records.map(recordToJson) };
  });
  app.get(`${prefix}/limits`, async (request) => {
    const accountId = await scope(request, parseInput(limitsSchema, request.query, 'query').account_id);
    const accountIds = accountId !== undefined ? [accountId] : (await storage.listAccounts()).map((account) => account.id);
    return { account_id: accountId ?? null, ...(await limits(storage, accountIds)) };
  });
  app.get(`${prefix}/series`, async (request) => {
    const query = parseInput(seriesSchema, request.query, 'query');
    return series(storage, await scope(request, query.account_id), query.bucket ?? 'day', query.days ?? 14);
  });
}

/** A ledger record with its columns' names. */
function recordToJson(record: UsageRecord) {
  return Object.fromEntries(usageFields.map((field, index) => [usageColumns[index], record[field]]));
}

async function limits(storage: Storage, accountIds: string[]) {
  const now = new Date();
  const parts = await Promise.all(accountIds.map((accountId) => limitsFor(storage, accountId, now)));
  return {
    object: 'limits',
    budgets: parts.flatMap((part) => part.budgets),
    rate_limits: parts.flatMap((part) => part.rate_limits),
    keys: parts.flatMap((part) => part.keys),
  };
}

/** Budgets with what the ledger holds for their current period; rate limits with the last minute's use. */
async function limitsFor(storage: Storage, accountId: string, now: Date) {
  const [states, keys, lastMinute] = await Promise.all([
    budgetStates(storage, accountId, now),
    storage.listKeys(accountId),
    storage.queryUsage({ accountId, since: new Date(now.getTime() - 60_000).toISOString(), groupBy: 'key' }),
  ]);
  const budgetState = states.map(({ budget, used, periodStart, resetsAt }) => {
    // A USD budget's amounts are dollars, as everywhere the API shows money.
    const inUnit = (amount: number) => (budget.unit === 'usd' ? usdOf(amount) : amount);
    return {
      account_id: accountId,
      key_id: budget.keyId,
      period: budget.period,
      unit: budget.unit,
      [budget.unit]: inUnit(budget.limit),
      used: inUnit(used),
      remaining: inUnit(Math.max(0, budget.limit - used)),
      period_start: periodStart ?? null,
      resets_at: resetsAt === null ? null : new Date(resetsAt).toISOString(),
    };
  });
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

/** Usage per bucket (UTC days, or the last 24 hours) split by model and by key, oldest bucket first. */
async function series(storage: Storage, accountId: string | undefined, bucket: 'day' | 'hour', days: number) {
  const now = new Date();
  const stepMs = bucket === 'hour' ? 3_600_000 : 86_400_000;
  const count = bucket === 'hour' ? 24 : days;
  const lastStart =
    bucket === 'hour'
      ? Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), now.getUTCHours())
      : Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const starts = Array.from({ length: count }, (_, index) => lastStart - (count - 1 - index) * stepMs);
  const group = (groups: UsageGroup[]) => groups.map((entry) => ({ group: entry.group, ...usageCounts(entry, 4), cost_usd: usdOf(entry.costNanoUsd) }));
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
        cost_usd: usdOf(byModel.totals.costNanoUsd),
        by_model: group(byModel.groups),
        by_key: group(byKey.groups),
      };
    }),
  );
  return { object: 'usage_series', account_id: accountId ?? null, bucket, since: buckets[0].start, until: new Date(lastStart + stepMs).toISOString(), buckets };
}
