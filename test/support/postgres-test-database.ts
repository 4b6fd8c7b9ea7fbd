/**
 * A throwaway PostgreSQL database per test run, created through the `postgres` maintenance
 * database and dropped afterwards, so runs never see each other's rows (or a developer's data).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The server to test against; override with TOLLGATE_TEST_POSTGRES_URL (its database part is ignored). */
const serverUrl = process.env.TOLLGATE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface PostgresTestDatabase {
  /** Connection URL of the fresh database. */
  url: string;
  /** Terminates every server connection to the database, as a server restart would. */
  dropConnections(): Promise<void>;
  /** Drops the database, disconnecting anything still attached. */
  drop(): Promise<void>;
}

function urlFor(database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

async function withMaintenanceClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: urlFor('postgres'), connectionTimeoutMillis: 3_000 });
  client.on('error', () => {});
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Null when the server answers; otherwise why not, for the skip or failure message. */
export async function postgresUnavailableReason(): Promise<string | null> {
  try {
    await withMaintenanceClient((client) => client.query('SELECT 1'));
    return null;
  } catch (error) {
    return `PostgreSQL is not reachable at ${urlFor('postgres')}: ${(error as Error).message}`;
  }
}

export async function createPostgresTestDatabase(): Promise<PostgresTestDatabase> {
  // Only [a-z0-9_], so the name needs no quoting rules beyond the double quotes below.
  const name = `tollgate_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  await withMaintenanceClient((client) => client.query(`CREATE DATABASE "${name}"`));
  const terminate = (client: pg.Client) =>
    client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
  return {
    url: urlFor(name),
    async dropConnections() {
      await withMaintenanceClient(terminate);
    },
    async drop() {
      await withMaintenanceClient(async (client) => {
        // Terminating first, rather than DROP … WITH (FORCE), also works on servers before 13.
        await terminate(client);
        await client.query(`DROP DATABASE IF EXISTS "${name}"`);
      });
    },
  };
}
