/**
 * SQLite backend (better-sqlite3). WAL with synchronous=NORMAL: a committed record survives a
 * killed process (not a power cut), and a write costs tens of microseconds, so the ledger can
 * commit before the response's last byte without adding latency.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { KeyWatchers } from '../key-watchers.js';
import { randomId } from '../random-id.js';
import type { Account, ApiKey, ApiKeyWithHash, Budget, RateLimit, Storage, UsageRecord } from '../types.js';
import { rowToUsage, usageColumns, usageValues, type UsageRow } from '../usage-row.js';
import { startCheckpointer } from './sqlite-checkpointer.js';
import { sqliteMigrations } from './sqlite-migrations.js';
import { UsageBatch } from './sqlite-usage-batch.js';
import { queryUsage, storedInstant } from './sqlite-usage-query.js';

interface KeyRow {
  id: string;
  account_id: string;
  name: string | null;
  prefix: string;
  secret_hash: string;
  created_at: string;
  revoked_at: string | null;
}

export interface SqliteOptions {
  /** WAL frames at which the log is started over (default 16,384: 64 MiB); tests use a small one. */
  walRestartFrames?: number;
  /** How often the checkpointer runs (default 250 ms). */
  walCheckpointIntervalMs?: number;
  /** How long a ledger commit is retried while another connection holds the write lock (default 5 s). */
  ledgerBusyLimitMs?: number;
  /**
   * Whether this storage runs the WAL checkpoints (default true). False for a cluster worker while
   * another worker holds that role (only one of them can checkpoint at a time) and for short-lived
   * users (the cluster primary's start-up, admin commands): their connections never checkpoint,
   * and SQLite checkpoints the log itself when the last connection to the file closes.
   */
  checkpoints?: boolean;
}

/** How long statements other than ledger commits wait for a lock, inside SQLite (they are rare: admin commands). */
const busyTimeoutMs = 5_000;

/**
 * Each connection's page cache, KiB: SQLite's own default. better-sqlite3 builds SQLite with 16 MiB
 * instead, and the ledger connection filled it as the table and its indexes grew (the largest
 * malloc user under the benchmark's load, 17 MiB at peak in heaptrack); at 2 MiB the peak RSS
 * fell ~18 MiB for +2.7% CPU a non-stream request.
 */
export const pageCacheKiB = 2048;

export function createSqliteStorage(path: string, options: SqliteOptions = {}): Storage {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  db.pragma('foreign_keys = ON');
  // Ledger commits have a connection of their own that never waits inside SQLite for a lock
  // (sqlite-usage-batch.ts). An in-memory database exists only on its one connection.
  const ledgerDb = path === ':memory:' ? db : new Database(path);
  if (ledgerDb !== db) {
    ledgerDb.pragma('synchronous = NORMAL');
    ledgerDb.pragma('busy_timeout = 0');
  }
  for (const connection of new Set([db, ledgerDb])) connection.pragma(`cache_size = -${pageCacheKiB}`);
  let statements: ReturnType<typeof prepareStatements> | null = null;
  const prepared = () => (statements ??= prepareStatements(db));
  let insertMany: ((records: UsageRecord[]) => boolean[]) | null = null;
  const batch = new UsageBatch((records) => {
    if (!insertMany) {
      const insert = ledgerDb.prepare(insertUsageSql);
      // IMMEDIATE: the write lock is taken at BEGIN, so a busy lock fails before any work is done.
      insertMany = ledgerDb.transaction((batchRecords: UsageRecord[]) =>
        batchRecords.map((record) => insert.run(...usageValues(record, true)).changes === 1),
      ).immediate;
    }
    return insertMany(records);
  }, options.ledgerBusyLimitMs ?? busyTimeoutMs);
  const checkpointer =
    path !== ':memory:' && options.checkpoints !== false
      ? startCheckpointer(
          path,
          batch,
          { restartFrames: options.walRestartFrames ?? defaultRestartFrames, intervalMs: options.walCheckpointIntervalMs ?? 250 },
          () => {
            // A round failed (sqlite-checkpointer.ts): SQLite checkpoints the log itself again.
            ledgerDb.pragma('wal_autocheckpoint = 1000');
          },
        )
      : null;
  // Connections that do not run the checkpoints leave them to whoever does: here beside the
  // checkpointer, and in a process without the role.
  if (checkpointer || options.checkpoints === false) for (const connection of new Set([db, ledgerDb])) connection.pragma('wal_autocheckpoint = 0');
  const keyWatchers = new KeyWatchers();

  const storage: Storage = {
    kind: 'sqlite',
    async migrate() {
      db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
      const applied = new Set((db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((row) => row.version));
      const now: number[] = [];
      for (const migration of sqliteMigrations) {
        if (applied.has(migration.version)) continue;
        // IMMEDIATE takes the write lock first, so two processes starting together cannot both apply it.
        db.transaction(() => {
          const again = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(migration.version);
          if (again) return;
          db.exec(migration.sql);
          db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(migration.version, new Date().toISOString());
          now.push(migration.version);
        }).immediate();
      }
      return now;
    },
    async ping() {
      db.prepare('SELECT 1').get();
    },
    async createAccount(name) {
      const account: Account = { id: randomId('acct'), name, createdAt: new Date().toISOString() };
      try {
        prepared().insertAccount.run(account.id, account.name, account.createdAt);
      } catch (error) {
        if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw new Error(`an account named '${name}' already exists`);
        throw error;
      }
      return account;
    },
    async getAccount(id) {
      const row = prepared().getAccount.get(id) as { id: string; name: string; created_at: string } | undefined;
      return row ? { id: row.id, name: row.name, createdAt: row.created_at } : null;
    },
    async listAccounts() {
      const rows = db.prepare('SELECT id, name, created_at FROM accounts ORDER BY created_at, id').all() as { id: string; name: string; created_at: string }[];
      return rows.map((row) => ({ id: row.id, name: row.name, createdAt: row.created_at }));
    },
    async countAccounts() {
      return (db.prepare('SELECT COUNT(*) AS count FROM accounts').get() as { count: number }).count;
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
      prepared().insertKey.run(key.id, key.accountId, key.name, key.prefix, input.secretHash, key.createdAt);
      return key;
    },
    async getKeyWithHash(keyId) {
      const row = prepared().getKey.get(keyId) as KeyRow | undefined;
      return row ? { ...rowToKey(row), secretHash: row.secret_hash } : null;
    },
    async listKeys(accountId) {
      const rows = db.prepare('SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at, id').all(accountId) as KeyRow[];
      return rows.map(rowToKey);
    },
    async revokeKey(keyId) {
      const result = db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(new Date().toISOString(), keyId);
      if (result.changes === 1) keyWatchers.revoked(keyId);
      return result.changes === 1;
    },
    watchKeys(listener) {
      return keyWatchers.watch(listener);
    },
    recordUsage(record) {
      return batch.add(record);
    },
    async getUsageRecord(requestId) {
      const row = db.prepare('SELECT * FROM usage_records WHERE request_id = ?').get(requestId) as UsageRow | undefined;
      return row ? rowToUsage(row) : null;
    },
    async queryUsage(query) {
      return queryUsage(db, query);
    },
    async recentUsage({ accountId, limit }) {
      const rows = (
        accountId
          ? db.prepare('SELECT * FROM usage_records WHERE account_id = ? ORDER BY created_at DESC, request_id DESC LIMIT ?').all(accountId, limit)
          : db.prepare('SELECT * FROM usage_records ORDER BY created_at DESC, request_id DESC LIMIT ?').all(limit)
      ) as UsageRow[];
      return rows.map(rowToUsage);
    },
    async sumTokens({ accountId, keyId, since }) {
      const clauses = ['account_id = ?'];
      const values: unknown[] = [accountId];
      if (keyId) {
        clauses.push('key_id = ?');
        values.push(keyId);
      }
      if (since) {
        clauses.push('created_at >= ?');
        values.push(storedInstant(since));
      }
      const row = db.prepare(`SELECT COALESCE(SUM(total_tokens), 0) AS total FROM usage_records WHERE ${clauses.join(' AND ')}`).get(...values) as {
        total: number;
      };
      return Number(row.total);
    },
    async setBudget(budget) {
      db.prepare(`INSERT INTO budgets (account_id, key_id, tokens, period) VALUES (?, ?, ?, ?)
        ON CONFLICT (account_id, key_id) DO UPDATE SET tokens = excluded.tokens, period = excluded.period`).run(
        budget.accountId,
        budget.keyId ?? '',
        budget.tokens,
        budget.period,
      );
    },
    async getBudgets(accountId, keyId) {
      const rows = db.prepare("SELECT * FROM budgets WHERE account_id = ? AND (key_id = '' OR key_id = ?)").all(accountId, keyId ?? '') as BudgetRow[];
      return rows.map(rowToBudget);
    },
    async listBudgets(accountId) {
      return (db.prepare('SELECT * FROM budgets WHERE account_id = ? ORDER BY key_id').all(accountId) as BudgetRow[]).map(rowToBudget);
    },
    async setRateLimit(limit) {
      const scope = limit.keyId ? `key:${limit.keyId}` : `account:${limit.accountId}`;
      db.prepare(`INSERT INTO rate_limits (scope, account_id, key_id, rpm, tpm) VALUES (?, ?, ?, ?, ?)
        ON CONFLICT (scope) DO UPDATE SET rpm = excluded.rpm, tpm = excluded.tpm`).run(
        scope,
        limit.keyId ? null : limit.accountId,
        limit.keyId,
        limit.rpm,
        limit.tpm,
      );
    },
    async getRateLimits(accountId, keyId) {
      const rows = db
        .prepare('SELECT account_id, key_id, rpm, tpm FROM rate_limits WHERE scope = ? OR scope = ?')
        .all(`account:${accountId}`, `key:${keyId ?? ''}`) as { account_id: string | null; key_id: string | null; rpm: number | null; tpm: number | null }[];
      return rows.map((row) => ({ accountId: row.account_id, keyId: row.key_id, rpm: row.rpm, tpm: row.tpm }));
    },
    async close() {
      // The last commit may wait inside SQLite for a lock: nothing else runs on this loop any more.
      if (ledgerDb !== db) ledgerDb.pragma(`busy_timeout = ${busyTimeoutMs}`);
      batch.flush(true);
      batch.stop();
      await checkpointer?.stop();
      if (ledgerDb !== db) ledgerDb.close();
      db.close();
    },
  };
  return storage;
}

/** The log is started over once it holds this many frames (64 MiB of 4 KiB pages). */
const defaultRestartFrames = 16_384;

const insertUsageSql = `INSERT INTO usage_records (${usageColumns.join(', ')}) VALUES (${usageColumns.map(() => '?').join(', ')}) ON CONFLICT (request_id) DO NOTHING`;

function prepareStatements(db: Database.Database) {
  return {
    insertAccount: db.prepare('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)'),
    getAccount: db.prepare('SELECT id, name, created_at FROM accounts WHERE id = ?'),
    insertKey: db.prepare('INSERT INTO api_keys (id, account_id, name, prefix, secret_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)'),
    getKey: db.prepare('SELECT * FROM api_keys WHERE id = ?'),
  };
}

interface BudgetRow {
  account_id: string;
  key_id: string;
  tokens: number;
  period: string;
}

function rowToBudget(row: BudgetRow): Budget {
  return { accountId: row.account_id, keyId: row.key_id === '' ? null : row.key_id, tokens: Number(row.tokens), period: row.period as Budget['period'] };
}

function rowToKey(row: KeyRow): ApiKey {
  return { id: row.id, accountId: row.account_id, name: row.name, prefix: row.prefix, createdAt: row.created_at, revokedAt: row.revoked_at };
}

export type { RateLimit, ApiKeyWithHash, UsageRecord };
