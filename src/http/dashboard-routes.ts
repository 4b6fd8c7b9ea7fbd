/**
 * The usage dashboard and playground: the built UI (dist/ui) served as static files at
 * /dashboard/ and /playground/, and the JSON the UI needs that /v5/usage does not give:
 * recent requests, budget and rate-limit state, and usage series by day or hour. The account
 * endpoints live under /v5/dashboard (the caller's own account only); the admin equivalents under
 * /admin/dashboard take any account and exist only when TOLLGATE_ADMIN_KEY is set.
 */
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Config } from '../config/config.js';
import type { Storage, UsageGroup, UsageRecord, UsageTotals } from '../storage/types.js';
import { periodWindow } from '../usage/budget-periods.js';
import { GatewayError, invalidRequest } from '../errors/gateway-error.js';
import { requireAdminKey } from './admin-key.js';
import { callerOf } from './api-key-auth.js';

export interface DashboardApiOptions {
  storage: Storage;
}

export interface DashboardRouteOptions {
  storage: Storage;
  config: Config;
  /** The built UI; default `dist/ui` of this package. */
  uiDir?: string;
}

/** Where `vite build --config ui/vite.config.ts` writes, whether we run from dist/ or from src/. */
export function defaultUiDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  // Compiled: <root>/dist/src/http; from source (tsx and the like): <root>/src/http.
  const packageRoot = basename(resolve(here, '..', '..')) === 'dist' ? resolve(here, '..', '..', '..') : resolve(here, '..', '..');
  return join(packageRoot, 'dist', 'ui');
}

// ---------------------------------------------------------------- query parsing

const recentSchema = z.strictObject({ limit: z.coerce.number().int().min(1).max(500).optional(), account_id: z.string().min(1).optional() });
const seriesSchema = z.strictObject({
  bucket: z.enum(['day', 'hour'], { error: "'bucket' must be day or hour." }).optional(),
  days: z.coerce.number().int().min(1).max(60).optional(),
  account_id: z.string().min(1).optional(),
});
const limitsSchema = z.strictObject({ account_id: z.string().min(1).optional() });

function parseQuery<T>(schema: z.ZodType<T>, query: unknown): T {
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

async function recent(storage: Storage, accountId: string | undefined, limit: number) {
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

// ---------------------------------------------------------------- account API (inside /v5)

/** Registers /v5/dashboard/*; call inside the /v5 plugin so its auth hook sets `request.caller`. */
export function registerDashboardApi(v5: FastifyInstance, options: DashboardApiOptions): void {
  const { storage } = options;
  const own = (request: FastifyRequest, accountId: string | undefined) => {
    const caller = callerOf(request).account.id;
    if (accountId !== undefined && accountId !== caller) {
      throw new GatewayError("'account_id' must be your own account; use the admin dashboard for others.", {
        status: 403,
        type: 'permission_error',
        param: 'account_id',
        code: 'account_mismatch',
      });
    }
    return caller;
  };
  v5.get('/v5/dashboard/me', async (request) => {
    const { account, keyId } = callerOf(request);
    return { object: 'caller', account: { id: account.id, name: account.name, created_at: account.createdAt }, key_id: keyId };
  });
  v5.get('/v5/dashboard/recent', async (request) => {
    const query = parseQuery(recentSchema, request.query);
    return recent(storage, own(request, query.account_id), query.limit ?? 50);
  });
  v5.get('/v5/dashboard/limits', async (request) => {
    const accountId = own(request, parseQuery(limitsSchema, request.query).account_id);
    return { account_id: accountId, ...(await limits(storage, [accountId])) };
  });
  v5.get('/v5/dashboard/series', async (request) => {
    const query = parseQuery(seriesSchema, request.query);
    return series(storage, own(request, query.account_id), query.bucket ?? 'day', query.days ?? 14);
  });
}

// ---------------------------------------------------------------- admin API and static files

export function registerDashboardRoutes(app: FastifyInstance, options: DashboardRouteOptions): void {
  const { storage, config } = options;
  registerStaticUi(app, options.uiDir ?? defaultUiDir());
  const adminKey = config.adminKey;
  if (!adminKey) return;

  const knownAccount = async <Id extends string | undefined>(accountId: Id): Promise<Id> => {
    if (accountId !== undefined && !(await storage.getAccount(accountId)))
      throw invalidRequest(`No account '${accountId}'.`, 'account_id', 'account_not_found');
    return accountId;
  };
  app.register(async (admin) => {
    admin.addHook('onRequest', requireAdminKey({ adminKey }));
    admin.get('/admin/dashboard/accounts', async () => {
      const accounts = await storage.listAccounts();
      return { object: 'list', data: accounts.map((account) => ({ id: account.id, name: account.name, created_at: account.createdAt })) };
    });
    admin.get('/admin/dashboard/recent', async (request) => {
      const query = parseQuery(recentSchema, request.query);
      return recent(storage, await knownAccount(query.account_id), query.limit ?? 50);
    });
    admin.get('/admin/dashboard/limits', async (request) => {
      const query = parseQuery(limitsSchema, request.query);
      const accountIds = query.account_id ? [await knownAccount(query.account_id)] : (await storage.listAccounts()).map((account) => account.id);
      return { account_id: query.account_id ?? null, ...(await limits(storage, accountIds)) };
    });
    admin.get('/admin/dashboard/series', async (request) => {
      const query = parseQuery(seriesSchema, request.query);
      return series(storage, await knownAccount(query.account_id), query.bucket ?? 'day', query.days ?? 14);
    });
  });
}

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

const pageSecurityHeaders = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'referrer-policy': 'no-referrer',
};

const notBuiltPage = (uiDir: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Tollgate dashboard not built</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#1f2937}code{background:#f3f4f6;padding:.1rem .3rem;border-radius:4px}</style></head>
<body><h1>The dashboard has not been built</h1><p>The gateway serves the dashboard from <code>${escapeHtml(uiDir)}</code>, which has no <code>index.html</code>.</p>
<p>Build it with <code>npm run build</code> (or <code>npx vite build --config ui/vite.config.ts</code>) and reload this page. The API under <code>/v5</code> works without it.</p></body></html>`;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

const fileNotFound = (path: string) =>
  new GatewayError(`No file '${path}' in the dashboard.`, { status: 404, type: 'not_found_error', code: 'file_not_found' });

/** Serves files from `uiDir`: `/dashboard/` is index.html, `/playground/` is playground.html. */
function registerStaticUi(app: FastifyInstance, uiDir: string): void {
  const root = resolve(uiDir);
  const send = async (reply: FastifyReply, relative: string, shownPath: string) => {
    if (!existsSync(join(root, 'index.html'))) {
      return reply.status(503).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(notBuiltPage(root));
    }
    if (relative.includes('\0')) throw fileNotFound(shownPath);
    const file = resolve(root, `.${sep}${relative}`);
    if (!file.startsWith(root + sep)) throw fileNotFound(shownPath);
    const info = await stat(file).catch(() => null);
    if (!info?.isFile()) throw fileNotFound(shownPath);
    const type = contentTypes[extname(file).toLowerCase()] ?? 'application/octet-stream';
    // Vite names built assets by content hash, so they never change; pages must be revalidated.
    const immutable = relative.startsWith('assets/');
    reply
      .type(type)
      .header('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      .header('x-content-type-options', 'nosniff');
    if (type.startsWith('text/html')) reply.headers(pageSecurityHeaders);
    return reply.send(await readFile(file));
  };
  const relativePath = (request: FastifyRequest) => {
    const raw = (request.params as Record<string, string>)['*'] ?? '';
    return raw.split('?')[0];
  };
  const redirect = (to: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
    return reply.redirect(to + query, 301);
  };

  // A person opening the gateway's address lands on the dashboard; 302, as the root may serve more one day.
  app.get('/', async (_request, reply) => reply.redirect('/dashboard/', 302));
  app.get('/dashboard', redirect('/dashboard/'));
  app.get('/playground', redirect('/playground/'));
  app.get('/dashboard/*', async (request, reply) => {
    const relative = relativePath(request);
    return send(reply, relative === '' ? 'index.html' : relative, `/dashboard/${relative}`);
  });
  app.get('/playground/*', async (request, reply) => {
    const relative = relativePath(request);
    return send(reply, relative === '' ? 'playground.html' : relative, `/playground/${relative}`);
  });
}
