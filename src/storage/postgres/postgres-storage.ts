/**
 * PostgreSQL backend (pg). Same tables and column names as SQLite, so everything but migrations,
 * the ledger's batches and the pool is shared (sql-storage.ts).
 */
import pg from 'pg';
import { createSqlStorage } from '../sql-storage.js';
import type { Storage } from '../types.js';
import { migratePostgres } from './postgres-migrate.js';
import { postgresMigrations } from './postgres-migrations.js';
import { PostgresUsageBatch } from './postgres-usage-batch.js';

export interface PostgresOptions {
  /**
   * Called when an idle pooled connection dies (database restart, network cut). The pool has
   * already discarded it and opens a fresh one on demand; default: a process warning.
   */
  onConnectionError?: (error: Error) => void;
}

export function createPostgresStorage(url: string, options: PostgresOptions = {}): Storage {
  // Each instance of the gateway holds its own pool; a database restart is an error result, never a crash.
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    // A stuck query fails instead of pinning a connection.
    statement_timeout: 15_000,
    // Bounds both connecting and waiting for a free connection, so ping() fails instead of hanging.
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    application_name: 'tollgate',
    // Times are compared and returned as instants either way; UTC keeps any text rendering unambiguous.
    options: '-c TimeZone=UTC',
  });
  const report = options.onConnectionError ?? ((error: Error) => process.emitWarning(`PostgreSQL connection lost: ${error.message}`));
  // Without a listener, an idle client's socket error is an unhandled 'error' event and kills the process.
  pool.on('error', (error) => report(error));
  const usageBatch = new PostgresUsageBatch((sql, values) => pool.query<{ request_id: string }>(sql, values));
  let closed: Promise<void> | null = null;
  const numbered = (sql: string) => {
    let index = 0;
    return sql.replace(/\?/g, () => `$${++index}`);
  };

  return createSqlStorage(
    {
      query: async <Row>(sql: string, values: unknown[] = []) => (await pool.query(numbered(sql), values)).rows as Row[],
      run: async (sql, values = []) => (await pool.query(numbered(sql), values)).rowCount ?? 0,
      // TIMESTAMPTZ compares instants: any ISO form will do.
      instant: (iso) => iso,
      // Days are UTC whatever the session says.
      dayExpression: "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')",
    },
    {
      kind: 'postgres',
      migrate: () => migratePostgres(pool, postgresMigrations),
      recordUsage: (record) => usageBatch.add(record),
      async close() {
        // Records still queued or in flight are written first; pg-pool throws on a second end(),
        // closing twice is harmless everywhere else.
        closed ??= usageBatch.settle().then(() => pool.end());
        await closed;
      },
    },
  );
}
