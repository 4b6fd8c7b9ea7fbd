/** The connection pool, configured so that a database restart is an error result, never a crash. */
import pg from 'pg';

export interface PostgresPoolOptions {
  /** Connections held at most; default 10. Each instance of the gateway holds its own pool. */
  max?: number;
  /** Server-side limit per statement, ms; default 15 000. A stuck query fails instead of pinning a connection. */
  statementTimeoutMs?: number;
  /**
   * Called when an idle pooled connection dies (database restart, network cut). The pool has
   * already discarded it and opens a fresh one on demand; default: a process warning.
   */
  onConnectionError?: (error: Error) => void;
}

export function createPostgresPool(url: string, options: PostgresPoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    statement_timeout: options.statementTimeoutMs ?? 15_000,
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
  return pool;
}
