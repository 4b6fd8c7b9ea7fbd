/**
 * The Storage methods SQLite and PostgreSQL share: the same tables, columns and queries, written
 * once with `?` placeholders. Each backend adds its driver, its migrations, its ledger batching and
 * its close. Results match byte for byte (the contract suite checks): byte-order sorting, NULL
 * groups first, UTC days, numbers as numbers.
 */
import { randomBytes } from 'node:crypto';
import { accountExists, storageUnavailable } from '../errors/gateway-error.js';
import { idempotencyScopeClause as scopeClause, idempotencyScopeValues as scopeOf, rowToIdempotencyEntry, type IdempotencyRow } from './idempotency-row.js';
import type { Account, ApiKey, Budget, RateLimit, Storage, UsageQuery } from './types.js';
import { isoTime, rowToGroup, rowToTotals, rowToUsage, usageAggregateSelect, type AggregateRow, type UsageRow } from './usage-row.js';

export interface SqlDriver {
  /** The rows of a query; `?` marks each parameter. */
  query<Row>(sql: string, values?: unknown[]): Promise<Row[]>;
  /** Runs a statement; resolves to the number of rows it changed. */
  run(sql: string, values?: unknown[]): Promise<number>;
  /** A `since`/`until` bound as the backend's created_at compares with it. */
  instant(iso: string): string;
  /** created_at's UTC day as YYYY-MM-DD. */
  dayExpression: string;
}

/** What only the backend itself knows. */
export type BackendMethods = Pick<Storage, 'kind' | 'migrate' | 'recordUsage' | 'close'>;

interface AccountRow {
  id: string;
  name: string;
  created_at: string | Date;
}

interface KeyRow {
  id: string;
  account_id: string;
  name: string | null;
  prefix: string;
  secret_hash: string;
  created_at: string | Date;
  revoked_at: string | Date | null;
}

interface BudgetRow {
  account_id: string;
  key_id: string;
  unit: string;
  amount: number | string;
  period: string;
}

interface RateLimitRow {
  account_id: string | null;
  key_id: string | null;
  rpm: number | null;
  tpm: number | string | null;
}

/**
 * Every method here answers from the database or fails with a 503 the client may retry: a
 * database that is down, unreachable or locked is never a 500.
 */
export function createSqlStorage(driver: SqlDriver, backend: BackendMethods): Storage {
  const query = <Row>(sql: string, values?: unknown[]) => driver.query<Row>(sql, values).catch(unavailable);
  const run = (sql: string, values?: unknown[]) => driver.run(sql, values).catch(unavailable);
  const keyWatchers = new Set<(keyId: string) => void>();
  const groupExpressions = { model: 'model', day: driver.dayExpression, key: 'key_id' } as const;

  return {
    ...backend,
    async ping() {
      await query('SELECT 1');
    },
    async createAccount(name) {
      // 128 bits of randomness, base62-ish.
      const id = `acct_${randomBytes(16).toString('base64url').replace(/[-_]/g, '').slice(0, 21)}`;
      const account: Account = { id, name, createdAt: new Date().toISOString() };
      await driver
        .run('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)', [account.id, account.name, account.createdAt])
        .catch((error: unknown) => {
          throw duplicateName(error) ? accountExists(name) : storageUnavailable(error);
        });
      return account;
    },
    async getAccount(id) {
      const [row] = await query<AccountRow>('SELECT id, name, created_at FROM accounts WHERE id = ?', [id]);
      return row ? rowToAccount(row) : null;
    },
    async listAccounts() {
      return (await query<AccountRow>('SELECT id, name, created_at FROM accounts ORDER BY created_at, id')).map(rowToAccount);
    },
    async countAccounts() {
      const [row] = await query<{ count: number | string }>('SELECT COUNT(*) AS count FROM accounts');
      return Number(row.count);
    },
    async createKey(input) {
      const key: ApiKey = {
        id: input.id,
        accountId: input.accountId,
        name: input.name,
        prefix: input.prefix,
        createdAt: new Date().toISOString(),
        revokedAt: null,
      };
      await run('INSERT INTO api_keys (id, account_id, name, prefix, secret_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)', [
        key.id,
        key.accountId,
        key.name,
        key.prefix,
        input.secretHash,
        key.createdAt,
      ]);
      return key;
    },
    async getKeyWithHash(keyId) {
      const [row] = await query<KeyRow>('SELECT * FROM api_keys WHERE id = ?', [keyId]);
      return row ? { ...rowToKey(row), secretHash: row.secret_hash } : null;
    },
    async listKeys(accountId) {
      return (await query<KeyRow>('SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at, id', [accountId])).map(rowToKey);
    },
    async revokeKey(keyId) {
      const revoked = (await run('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', [new Date().toISOString(), keyId])) === 1;
      if (revoked) for (const listener of keyWatchers) listener(keyId);
      return revoked;
    },
    watchKeys(listener) {
      keyWatchers.add(listener);
      return () => keyWatchers.delete(listener);
    },
    async getUsageRecord(requestId) {
      const [row] = await query<UsageRow>('SELECT * FROM usage_records WHERE request_id = ?', [requestId]);
      return row ? rowToUsage(row) : null;
    },
    async queryUsage(usageQuery) {
      const { where, values } = usageFilter(driver, usageQuery);
      const [totals] = await query<AggregateRow>(`SELECT ${usageAggregateSelect} FROM usage_records ${where}`, values);
      if (!usageQuery.groupBy) return { groups: [], totals: rowToTotals(totals) };
      const expression = groupExpressions[usageQuery.groupBy];
      const groups = await query<AggregateRow>(
        `SELECT ${expression} AS group_value, ${usageAggregateSelect} FROM usage_records ${where} GROUP BY ${expression} ORDER BY ${expression} NULLS FIRST`,
        values,
      );
      return { groups: groups.map(rowToGroup), totals: rowToTotals(totals) };
    },
    async recentUsage({ accountId, limit }) {
      const found = accountId
        ? await query<UsageRow>('SELECT * FROM usage_records WHERE account_id = ? ORDER BY created_at DESC, request_id DESC LIMIT ?', [accountId, limit])
        : await query<UsageRow>('SELECT * FROM usage_records ORDER BY created_at DESC, request_id DESC LIMIT ?', [limit]);
      return found.map(rowToUsage);
    },
    async sumUsage({ accountId, keyId, since, unit }) {
      const { where, values } = usageFilter(driver, { accountId, keyId: keyId ?? undefined, since });
      const column = unit === 'usd' ? 'cost_nano_usd' : 'total_tokens';
      const [row] = await query<{ total: number | string }>(`SELECT COALESCE(SUM(${column}), 0) AS total FROM usage_records ${where}`, values);
      return Number(row.total);
    },
    async setBudget(budget) {
      await run(
        `INSERT INTO budgets (account_id, key_id, unit, amount, period) VALUES (?, ?, ?, ?, ?)
          ON CONFLICT (account_id, key_id, unit) DO UPDATE SET amount = excluded.amount, period = excluded.period`,
        [budget.accountId, budget.keyId ?? '', budget.unit, budget.limit, budget.period],
      );
    },
    async getBudgets(accountId, keyId) {
      const found = await query<BudgetRow>("SELECT * FROM budgets WHERE account_id = ? AND (key_id = '' OR key_id = ?) ORDER BY key_id, unit", [
        accountId,
        keyId ?? '',
      ]);
      return found.map(rowToBudget);
    },
    async listBudgets(accountId) {
      return (await query<BudgetRow>('SELECT * FROM budgets WHERE account_id = ? ORDER BY key_id, unit', [accountId])).map(rowToBudget);
    },
    async setRateLimit(limit) {
      const scope = limit.keyId ? `key:${limit.keyId}` : `account:${limit.accountId}`;
      await run(
        `INSERT INTO rate_limits (scope, account_id, key_id, rpm, tpm) VALUES (?, ?, ?, ?, ?)
          ON CONFLICT (scope) DO UPDATE SET rpm = excluded.rpm, tpm = excluded.tpm`,
        [scope, limit.keyId ? null : limit.accountId, limit.keyId, limit.rpm, limit.tpm],
      );
    },
    async getRateLimits(accountId, keyId) {
      const found = await query<RateLimitRow>('SELECT account_id, key_id, rpm, tpm FROM rate_limits WHERE scope = ? OR scope = ? ORDER BY scope', [
        `account:${accountId}`,
        `key:${keyId ?? ''}`,
      ]);
      return found.map(rowToRateLimit);
    },
    async claimIdempotencyKey(claim) {
      const now = driver.instant(claim.now);
      // Inserted, or taken over once expired; else the live holder. A holder gone between the
      // statements (released, purged) leaves the key free for the next round.
      for (let round = 0; round < 3; round++) {
        const inserted = await run(
          `INSERT INTO idempotency_keys (account_id, route, idempotency_key, fingerprint, claim_token, created_at, expires_at)
            VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (account_id, route, idempotency_key) DO NOTHING`,
          [...scopeOf(claim), claim.fingerprint, claim.token, claim.now, claim.expiresAt],
        );
        if (inserted === 1) return null;
        const takenOver = await run(
          `UPDATE idempotency_keys SET fingerprint = ?, claim_token = ?, completion_id = NULL, status = NULL, headers = NULL, body = NULL,
            created_at = ?, expires_at = ? WHERE ${scopeClause} AND expires_at <= ?`,
          [claim.fingerprint, claim.token, claim.now, claim.expiresAt, ...scopeOf(claim), now],
        );
        if (takenOver === 1) return null;
        const [row] = await query<IdempotencyRow>(`SELECT * FROM idempotency_keys WHERE ${scopeClause} AND expires_at > ?`, [...scopeOf(claim), now]);
        if (row) return rowToIdempotencyEntry(row);
      }
      throw storageUnavailable(new Error('the idempotency key changed hands three times during one claim'));
    },
    async renewIdempotencyKey(holder) {
      const sql = `UPDATE idempotency_keys SET expires_at = ? WHERE ${scopeClause} AND claim_token = ? AND status IS NULL`;
      return (await run(sql, [holder.expiresAt, ...scopeOf(holder), holder.token])) === 1;
    },
    async completeIdempotencyKey(holder) {
      const { completionId, response, expiresAt } = holder;
      const sql = `UPDATE idempotency_keys SET completion_id = ?, status = ?, headers = ?, body = ?, expires_at = ?
        WHERE ${scopeClause} AND claim_token = ? AND status IS NULL`;
      const values = [completionId, response.status, JSON.stringify(response.headers), response.body, expiresAt, ...scopeOf(holder), holder.token];
      return (await run(sql, values)) === 1;
    },
    async releaseIdempotencyKey(holder) {
      return (await run(`DELETE FROM idempotency_keys WHERE ${scopeClause} AND claim_token = ? AND status IS NULL`, [...scopeOf(holder), holder.token])) === 1;
    },
    async purgeIdempotencyKeys({ now, limit }) {
      const before = driver.instant(now);
      // The outer test again: an entry taken over while the delete ran is live, and stays.
      return run(
        `DELETE FROM idempotency_keys WHERE expires_at <= ? AND (account_id, route, idempotency_key) IN
          (SELECT account_id, route, idempotency_key FROM idempotency_keys WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`,
        [before, before, limit],
      );
    },
  };
}

/** The WHERE clause of a usage query: account, key, `since` (inclusive) and `until` (exclusive). */
function usageFilter(driver: SqlDriver, filter: UsageQuery & { keyId?: string }): { where: string; values: unknown[] } {
  const clauses: string[] = [];
  const values: unknown[] = [];
  const add = (clause: string, value: unknown) => {
    clauses.push(clause);
    values.push(value);
  };
  if (filter.accountId) add('account_id = ?', filter.accountId);
  if (filter.keyId) add('key_id = ?', filter.keyId);
  if (filter.since) add('created_at >= ?', driver.instant(filter.since));
  if (filter.until) add('created_at < ?', driver.instant(filter.until));
  return { where: clauses.length ? `WHERE ${clauses.join(' AND ')}` : '', values };
}

function unavailable(error: unknown): never {
  throw storageUnavailable(error);
}

/** The UNIQUE constraint on accounts.name, as SQLite and PostgreSQL report it. */
function duplicateName(error: unknown): boolean {
  const { code, constraint } = error as { code?: string; constraint?: string };
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || (code === '23505' && constraint === 'accounts_name_key');
}

function rowToAccount(row: AccountRow): Account {
  return { id: row.id, name: row.name, createdAt: isoTime(row.created_at) };
}

function rowToKey(row: KeyRow): ApiKey {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    prefix: row.prefix,
    createdAt: isoTime(row.created_at),
    revokedAt: row.revoked_at === null ? null : isoTime(row.revoked_at),
  };
}

function rowToBudget(row: BudgetRow): Budget {
  return {
    accountId: row.account_id,
    keyId: row.key_id === '' ? null : row.key_id,
    unit: row.unit as Budget['unit'],
    limit: Number(row.amount),
    period: row.period as Budget['period'],
  };
}

function rowToRateLimit(row: RateLimitRow): RateLimit {
  return { accountId: row.account_id, keyId: row.key_id, rpm: row.rpm, tpm: row.tpm === null ? null : Number(row.tpm) };
}
