/**
 * The dashboard's routes: the JSON the UI needs under /v5/dashboard (the caller's own account
 * only), the admin equivalents under /admin/dashboard (any account; only when TOLLGATE_ADMIN_KEY
 * is set), and the built UI at /dashboard/ and /playground/.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config/config.js';
import type { Storage } from '../storage/types.js';
import { GatewayError, invalidRequest } from '../errors/gateway-error.js';
import { requireAdminKey } from './admin-key.js';
import { callerOf } from './api-key-auth.js';
import { limits, limitsSchema, parseQuery, recent, recentSchema, series, seriesSchema } from './dashboard-data.js';
import { defaultUiDir, registerStaticUi } from './dashboard-static.js';

export interface DashboardApiOptions {
  storage: Storage;
}

export interface DashboardRouteOptions {
  storage: Storage;
  config: Config;
  /** The built UI; default `dist/ui` of this package. */
  uiDir?: string;
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

// ---------------------------------------------------------------- admin API, and the UI

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
