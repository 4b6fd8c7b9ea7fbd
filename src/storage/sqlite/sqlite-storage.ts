/**
 * SQLite backend (better-sqlite3). WAL with synchronous=NORMAL: a committed record survives a
 * killed process (not a power cut), and a write costs tens of microseconds, so the ledger can
 * commit before the response's last byte without adding latency.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { createSqlStorage } from '../sql-storage.js';
import type { Storage, UsageRecord } from '../types.js';
import { usageColumns, usageValues } from '../usage-row.js';
import { startCheckpointer } from './sqlite-checkpointer.js';
import { sqliteMigrations } from './sqlite-migrations.js';
import { UsageBatch } from './sqlite-usage-batch.js';

export interface SqliteOptions {
  /** WAL frames at which the log is started over (default 16,384: 64 MiB of 4 KiB pages); tests use a small one. */
  walRestartFrames?: number;
  /** How often the checkpointer runs (default 250 ms). */
  walCheckpointIntervalMs?: number;
  /** How long a ledger commit is retried while another connection holds the write lock (default 5 s). */
  ledgerBusyLimitMs?: number;
  /**
   * Whether this storage runs the WAL checkpoints (default true). False for all cluster workers but
   * one and for short-lived users (admin commands): SQLite checkpoints when the last connection closes.
   */
  checkpoints?: boolean;
}

/** How long statements other than ledger commits wait for a lock, inside SQLite (they are rare: admin commands). */
const busyTimeoutMs = 5_000;

/** Each connection's page cache, KiB: SQLite's default, not better-sqlite3's 16 MiB (~18 MiB less peak RSS, +2.7% CPU). */
const pageCacheKiB = 2048;

const insertUsageSql = `INSERT INTO usage_records (${usageColumns.join(', ')}) VALUES (${usageColumns.map(() => '?').join(', ')}) ON CONFLICT (request_id) DO NOTHING`;

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
  const connections = new Set([db, ledgerDb]);
  for (const connection of connections) connection.pragma(`cache_size = -${pageCacheKiB}`);
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
      ? startCheckpointer(path, batch, { restartFrames: options.walRestartFrames ?? 16_384, intervalMs: options.walCheckpointIntervalMs ?? 250 }, () => {
          // A round failed (sqlite-checkpointer.ts): SQLite checkpoints the log itself again.
          ledgerDb.pragma('wal_autocheckpoint = 1000');
        })
      : null;
  // Connections that do not run the checkpoints leave them to whoever does: here beside the
  // checkpointer, and in a process without the role.
  if (checkpointer || options.checkpoints === false) for (const connection of connections) connection.pragma('wal_autocheckpoint = 0');

  // Statements by their text, prepared on first use (the tables exist only after migrate).
  const statements = new Map<string, Database.Statement>();
  const prepare = (sql: string) => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };

  return createSqlStorage(
    {
      query: async <Row>(sql: string, values: unknown[] = []) => prepare(sql).all(...values) as Row[],
      run: async (sql, values = []) => prepare(sql).run(...values).changes,
      instant: storedInstant,
      dayExpression: 'substr(created_at, 1, 10)',
    },
    {
      kind: 'sqlite',
      async migrate() {
        db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
        const applied = new Set((db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((row) => row.version));
        const now: number[] = [];
        for (const migration of sqliteMigrations) {
          if (applied.has(migration.version)) continue;
          // IMMEDIATE takes the write lock first, so two processes starting together cannot both apply it.
          db.transaction(() => {
            if (db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(migration.version)) return;
            db.exec(migration.sql);
            db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(migration.version, new Date().toISOString());
            now.push(migration.version);
          }).immediate();
        }
        return now;
      },
      recordUsage(record) {
        return batch.add(record);
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
    },
  );
}

/**
 * Times are stored as `toISOString()` text, which compares correctly only with text of that exact
 * shape, so a bound like `…T00:00:00Z` or `…+09:00` is rewritten first. A time without an offset is
 * UTC, as on PostgreSQL; text that is not a date is left as it is.
 */
function storedInstant(iso: string): string {
  const zoned = !iso.includes('T') || /T.*(?:Z|[+-]\d\d(?::?\d\d)?)$/i.test(iso) ? iso : `${iso}Z`;
  const time = Date.parse(zoned);
  return Number.isNaN(time) ? iso : new Date(time).toISOString();
}
