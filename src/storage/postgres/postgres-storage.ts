/**
 * PostgreSQL backend (pg). Same tables and column names as SQLite, so rows map through
 * usage-row.ts; queries are written to return exactly what the SQLite backend returns, which the
 * contract suite checks: byte-order sorting, NULL groups first, UTC days, numbers as numbers.
 */
import type pg from 'pg';
import { KeyWatchers } from '../key-watchers.js';
import { randomId } from '../random-id.js';
import type { Account, ApiKey, Budget, RateLimit, Storage, UsageQuery, UsageReport } from '../types.js';
import { rowToGroup, rowToTotals, rowToUsage, usageAggregateSelect, type AggregateRow, type UsageRow } from '../usage-row.js';
import { migratePostgres } from './postgres-migrate.js';
import { postgresMigrations } from './postgres-migrations.js';
import { createPostgresPool, type PostgresPoolOptions } from './postgres-pool.js';
import { PostgresUsageBatch } from './postgres-usage-batch.js';

interface AccountRow {
  id: string;
  name: string;
  created_at: Date;
}

interface KeyRow {
  id: string;
  account_id: string;
  name: string | null;
  prefix: string;
  secret_hash: string;
  created_at: Date;
  revoked_at: Date | null;
}

interface BudgetRow {
  account_id: string;
  key_id: string;
  tokens: string;
  period: string;
}

interface RateLimitRow {
  account_id: string | null;
  key_id: string | null;
  rpm: number | null;
  tpm: string | null;
}

/** SQLite sorts NULL first; PostgreSQL sorts it last unless told. Days are UTC whatever the session says. */
const groupExpressions = {
  model: 'model',
  day: "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')",
  key: 'key_id',
} as const;

export function createPostgresStorage(url: string, options: PostgresPoolOptions = {}): Storage {
  const pool = createPostgresPool(url, options);
  const keyWatchers = new KeyWatchers();
  const usageBatch = new PostgresUsageBatch((sql, values) => pool.query<{ request_id: string }>(sql, values));
  let closed: Promise<void> | null = null;

  const rows = async <Row extends pg.QueryResultRow>(sql: string, values: unknown[] = []) => (await pool.query<Row>(sql, values)).rows;

  return {
    kind: 'postgres',
    async migrate() {
      return migratePostgres(pool, postgresMigrations);
    },
    async ping() {
      await pool.query('SELECT 1');
    },
    async createAccount(name) {
      const account: Account = { id: randomId('acct'), name, createdAt: new Date().toISOString() };
      try {
        await pool.query('INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, $3)', [account.id, account.name, account.createdAt]);
      } catch (error) {
        const { code, constraint } = error as { code?: string; constraint?: string };
        if (code === '23505' && constraint === 'accounts_name_key') throw new Error(`an account named '${name}' already exists`);
        throw error;
      }
      return account;
    },
    async getAccount(id) {
      const [row] = await rows<AccountRow>('SELECT id, name, created_at FROM accounts WHERE id = $1', [id]);
      return row ? rowToAccount(row) : null;
    },
    async listAccounts() {
      return (await rows<AccountRow>('SELECT id, name, created_at FROM accounts ORDER BY created_at, id')).map(rowToAccount);
    },
    async countAccounts() {
      const [row] = await rows<{ count: string }>('SELECT COUNT(*) AS count FROM accounts');
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
      await pool.query('INSERT INTO api_keys (id, account_id, name, prefix, secret_hash, created_at) VALUES ($1, $2, $3, $4, $5, $6)', [
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
      const [row] = await rows<KeyRow>('SELECT * FROM api_keys WHERE id = $1', [keyId]);
      return row ? { ...rowToKey(row), secretHash: row.secret_hash } : null;
    },
    async listKeys(accountId) {
      return (await rows<KeyRow>('SELECT * FROM api_keys WHERE account_id = $1 ORDER BY created_at, id', [accountId])).map(rowToKey);
    },
    async revokeKey(keyId) {
      const result = await pool.query('UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [new Date().toISOString(), keyId]);
      if (result.rowCount === 1) keyWatchers.revoked(keyId);
      return result.rowCount === 1;
    },
    watchKeys(listener) {
      return keyWatchers.watch(listener);
    },
    recordUsage(record) {
      return usageBatch.add(record);
    },
    async getUsageRecord(requestId) {
      const [row] = await rows<UsageRow>('SELECT * FROM usage_records WHERE request_id = $1', [requestId]);
      return row ? rowToUsage(row) : null;
    },
    async queryUsage(query) {
      return queryUsage(pool, query);
    },
    async recentUsage({ accountId, limit }) {
      const found = accountId
        ? await rows<UsageRow>('SELECT * FROM usage_records WHERE account_id = $1 ORDER BY created_at DESC, request_id DESC LIMIT $2', [accountId, limit])
        : await rows<UsageRow>('SELECT * FROM usage_records ORDER BY created_at DESC, request_id DESC LIMIT $1', [limit]);
      return found.map(rowToUsage);
    },
    async sumTokens({ accountId, keyId, since }) {
      const values: unknown[] = [accountId];
      const clauses = ['account_id = $1'];
      if (keyId) {
        values.push(keyId);
        clauses.push(`key_id = $${values.length}`);
      }
      if (since) {
        values.push(since);
        clauses.push(`created_at >= $${values.length}`);
      }
      const [row] = await rows<{ total: string }>(`SELECT COALESCE(SUM(total_tokens), 0) AS total FROM usage_records WHERE ${clauses.join(' AND ')}`, values);
      return Number(row.total);
    },
    async setBudget(budget) {
      await pool.query(
        `INSERT INTO budgets (account_id, key_id, tokens, period) VALUES ($1, $2, $3, $4)
          ON CONFLICT (account_id, key_id) DO UPDATE SET tokens = excluded.tokens, period = excluded.period`,
        [budget.accountId, budget.keyId ?? '', budget.tokens, budget.period],
      );
    },
    async getBudgets(accountId, keyId) {
      const found = await rows<BudgetRow>("SELECT * FROM budgets WHERE account_id = $1 AND (key_id = '' OR key_id = $2) ORDER BY key_id", [
        accountId,
        keyId ?? '',
      ]);
      return found.map(rowToBudget);
    },
    async listBudgets(accountId) {
      return (await rows<BudgetRow>('SELECT * FROM budgets WHERE account_id = $1 ORDER BY key_id', [accountId])).map(rowToBudget);
    },
    async setRateLimit(limit) {
      const scope = limit.keyId ? `key:${limit.keyId}` : `account:${limit.accountId}`;
      await pool.query(
        `INSERT INTO rate_limits (scope, account_id, key_id, rpm, tpm) VALUES ($1, $2, $3, $4, $5)
          ON CONFLICT (scope) DO UPDATE SET rpm = excluded.rpm, tpm = excluded.tpm`,
        [scope, limit.keyId ? null : limit.accountId, limit.keyId, limit.rpm, limit.tpm],
      );
    },
    async getRateLimits(accountId, keyId) {
      const found = await rows<RateLimitRow>('SELECT account_id, key_id, rpm, tpm FROM rate_limits WHERE scope = $1 OR scope = $2 ORDER BY scope', [
        `account:${accountId}`,
        `key:${keyId ?? ''}`,
      ]);
      return found.map(rowToRateLimit);
    },
    async close() {
      // Records still queued or in flight are written first; pg-pool throws on a second end(),
      // closing twice is harmless everywhere else.
      closed ??= usageBatch.settle().then(() => pool.end());
      await closed;
    },
  };
}

async function queryUsage(pool: pg.Pool, query: UsageQuery): Promise<UsageReport> {
  const clauses: string[] = [];
  const values: unknown[] = [];
  if (query.accountId) {
    values.push(query.accountId);
    clauses.push(`account_id = $${values.length}`);
  }
  if (query.since) {
    values.push(query.since);
    clauses.push(`created_at >= $${values.length}`);
  }
  if (query.until) {
    values.push(query.until);
    clauses.push(`created_at < $${values.length}`);
  }
  const where = clauses.length ? `WHERE ${clauses.join(' AND ')}` : '';
  const totalsResult = await pool.query<AggregateRow>(`SELECT ${usageAggregateSelect} FROM usage_records ${where}`, values);
  const totals = rowToTotals(totalsResult.rows[0]);
  if (!query.groupBy) return { groups: [], totals };
  const expression = groupExpressions[query.groupBy];
  const grouped = await pool.query<AggregateRow>(
    `SELECT ${expression} AS group_value, ${usageAggregateSelect} FROM usage_records ${where}
      GROUP BY ${expression} ORDER BY ${expression} NULLS FIRST`,
    values,
  );
  return { groups: grouped.rows.map(rowToGroup), totals };
}

function rowToAccount(row: AccountRow): Account {
  return { id: row.id, name: row.name, createdAt: row.created_at.toISOString() };
}

function rowToKey(row: KeyRow): ApiKey {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    prefix: row.prefix,
    createdAt: row.created_at.toISOString(),
    revokedAt: row.revoked_at ? row.revoked_at.toISOString() : null,
  };
}

function rowToBudget(row: BudgetRow): Budget {
  return { accountId: row.account_id, keyId: row.key_id === '' ? null : row.key_id, tokens: Number(row.tokens), period: row.period as Budget['period'] };
}

function rowToRateLimit(row: RateLimitRow): RateLimit {
  return { accountId: row.account_id, keyId: row.key_id, rpm: row.rpm, tpm: row.tpm === null ? null : Number(row.tpm) };
}
