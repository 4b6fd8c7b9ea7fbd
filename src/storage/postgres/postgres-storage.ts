/**
 * PostgreSQL backend (pg). Same tables and column names as SQLite, so everything but the pool,
 * migrations and the ledger's batches is shared (sql-storage.ts).
 */
import pg from 'pg';
import { createSqlStorage } from '../sql-storage.js';
import type { Storage } from '../types.js';
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
      migrate: () => migrate(pool),
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

/** Arbitrary but fixed ('toll' in ASCII): every Tollgate instance on a database contends for this lock. */
const migrationLockKey = 0x746f6c6c;

/** Applies pending migrations exactly once, even when several instances start together. */
async function migrate(pool: pg.Pool): Promise<number[]> {
  const client = await pool.connect();
  // A checked-out client has no idle listener; a connection dropped mid-migration must reject the
  // pending query (it does) rather than surface as an unhandled 'error' event.
  const ignore = () => {};
  client.on('error', ignore);
  let failure: Error | undefined;
  try {
    await client.query('BEGIN');
    // Waiting for another instance's migration, or building an index, may take longer than a request should.
    await client.query('SET LOCAL statement_timeout = 0');
    // Transaction-scoped: released by COMMIT/ROLLBACK, and by the server if this connection dies.
    await client.query('SELECT pg_advisory_xact_lock($1)', [migrationLockKey]);
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)');
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
    const done = new Set(rows.map((row) => row.version));
    const applied: number[] = [];
    // One transaction for all pending versions: PostgreSQL DDL is transactional, so a failed
    // migration leaves the schema exactly as it was. (So no CREATE INDEX CONCURRENTLY in here.)
    for (const migration of postgresMigrations) {
      if (done.has(migration.version)) continue;
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, now())', [migration.version]);
      applied.push(migration.version);
    }
    await client.query('COMMIT');
    return applied;
  } catch (error) {
    failure = error as Error;
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.removeListener('error', ignore);
    // Passing the error destroys the connection instead of pooling one in an unknown state.
    client.release(failure);
  }
}
