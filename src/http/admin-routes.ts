/**
 * Admin endpoints behind TOLLGATE_ADMIN_KEY: any account's usage, accounts, keys, budgets and
 * limits. Without the admin key configured they do not exist (404).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { issueKey } from '../auth/api-keys.js';
import { presentedKey } from '../auth/authenticate.js';
import type { Config } from '../config/config.js';
import { MAX_EXACT_USD, usdToNano } from '../config/prices.js';
import type { Budget, Storage } from '../storage/types.js';
import { requireAccount, requirePolicyTarget } from '../usage/policy-target.js';
import { GatewayError } from '../errors/gateway-error.js';
import { parseInput } from './parse-input.js';
import { answerUsage, parseUsageQuery } from './usage-route.js';

export interface AdminRouteOptions {
  config: Config;
  storage: Storage;
  /** Called after budgets or limits change, so admission stops using cached ones. */
  onPolicyChange: () => void;
}

const budgetSchema = z
  .strictObject({
    account_id: z.string().min(1),
    key_id: z.string().min(1).nullish(),
    tokens: z.number().int().min(0).optional(),
    usd: z
      .number()
      .min(0)
      .max(MAX_EXACT_USD, { error: `'usd' may be at most ${MAX_EXACT_USD}: larger sums are not exact.` })
      .refine((usd) => Math.abs(usd * 1e9 - Math.round(usd * 1e9)) < 1e-3, { error: "'usd' may have at most nine decimals." })
      .optional(),
    period: z.enum(['day', 'month', 'total']),
  })
  .refine((body) => (body.tokens === undefined) !== (body.usd === undefined), { error: 'Give exactly one of tokens or usd.', path: ['tokens'] });

const limitSchema = z
  .strictObject({
    account_id: z.string().min(1).nullish(),
    key_id: z.string().min(1).nullish(),
    rpm: z.number().int().min(0).nullish(),
    tpm: z.number().int().min(0).nullish(),
  })
  .refine((body) => Boolean(body.account_id) !== Boolean(body.key_id), { error: 'Give exactly one of account_id or key_id.', path: ['account_id'] });

/** `/admin/usage`'s own parameter; the rest is the usage query of /v5/usage. Empty = every account. */
const usageAccountSchema = z.strictObject({ account_id: z.string({ error: "'account_id' must be one account id, given once." }).optional() });

const accountSchema = z.strictObject({ name: z.string().min(1).max(200) });
const keySchema = z.strictObject({ account_id: z.string().min(1), name: z.string().max(200).nullish() });

/** An onRequest hook that admits only the admin key (constant-time compare of SHA-256 digests). */
export function requireAdminKey(adminKey: string) {
  const expected = createHash('sha256').update(adminKey).digest();
  return async function checkAdminKey(request: FastifyRequest): Promise<void> {
    const presented = presentedKey(request.headers);
    const digest = createHash('sha256')
      .update(presented ?? '')
      .digest();
    if (!presented || !timingSafeEqual(digest, expected)) {
      throw new GatewayError('Admin endpoints need the admin key.', { status: 401, type: 'authentication_error', code: 'invalid_admin_key' });
    }
  };
}

export function registerAdminRoutes(app: FastifyInstance, options: AdminRouteOptions): void {
  const { config, storage, onPolicyChange } = options;
  const adminKey = config.adminKey;
  if (!adminKey) return;
  app.register(async (admin) => {
    admin.addHook('onRequest', requireAdminKey(adminKey));

    admin.get('/admin/accounts', async () => ({ object: 'list', data: await storage.listAccounts() }));
    admin.post('/admin/accounts', async (request, reply) => {
      const { name } = parseInput(accountSchema, request.body, 'body');
      return reply.status(201).send(await storage.createAccount(name));
    });
    admin.post('/admin/keys', async (request, reply) => {
      const body = parseInput(keySchema, request.body, 'body');
      await requireAccount(storage, body.account_id);
      return reply.status(201).send(await issueKey(storage, body.account_id, body.name ?? null));
    });
    admin.get('/admin/usage', async (request, reply) => {
      const { account_id: given, ...rest } = (request.query ?? {}) as Record<string, unknown>;
      const accountId = parseInput(usageAccountSchema, { account_id: given }, 'query', true).account_id;
      const query = parseUsageQuery(rest);
      if (accountId) await requireAccount(storage, accountId);
      const report = await storage.queryUsage({ accountId: accountId || undefined, since: query.since, until: query.until, groupBy: query.group_by });
      return answerUsage(reply, accountId || null, query, report);
    });
    admin.put('/admin/budgets', async (request) => {
      const body = parseInput(budgetSchema, request.body, 'body');
      await requirePolicyTarget(storage, { accountId: body.account_id, keyId: body.key_id ?? null });
      const keyId = body.key_id ?? null;
      const budget: Budget =
        body.usd === undefined
          ? { accountId: body.account_id, keyId, unit: 'tokens', limit: body.tokens ?? 0, period: body.period }
          : { accountId: body.account_id, keyId, unit: 'usd', limit: usdToNano(body.usd), period: body.period };
      await storage.setBudget(budget);
      onPolicyChange();
      return { object: 'budget', ...body, key_id: keyId };
    });
    admin.put('/admin/limits', async (request) => {
      const body = parseInput(limitSchema, request.body, 'body');
      await requirePolicyTarget(storage, { accountId: body.account_id ?? null, keyId: body.key_id ?? null });
      await storage.setRateLimit({ accountId: body.account_id ?? null, keyId: body.key_id ?? null, rpm: body.rpm ?? null, tpm: body.tpm ?? null });
      onPolicyChange();
      return { object: 'rate_limit', account_id: body.account_id ?? null, key_id: body.key_id ?? null, rpm: body.rpm ?? null, tpm: body.tpm ?? null };
    });
  });
}
