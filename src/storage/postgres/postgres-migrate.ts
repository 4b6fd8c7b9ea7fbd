/** Applies pending PostgreSQL migrations exactly once, even when several instances start together. */
import type pg from 'pg';

/** Arbitrary but fixed ('toll' in ASCII): every Tollgate instance on a database contends for this lock. */
const migrationLockKey = 0x746f6c6c;

export async function migratePostgres(pool: pg.Pool, migrations: ReadonlyArray<{ version: number; sql: string }>): Promise<number[]> {
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
    for (const migration of migrations) {
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
