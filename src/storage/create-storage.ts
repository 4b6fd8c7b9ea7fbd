/** The only module that picks a storage driver, from DATABASE_URL. */
import { createSqliteStorage } from './sqlite/sqlite-storage.js';
import type { Storage } from './types.js';

export interface StorageOptions {
  /** SQLite only: whether this process runs the WAL checkpoints (default true; one cluster worker at a time does). */
  sqliteCheckpoints?: boolean;
}

export async function createStorage(databaseUrl: string, options: StorageOptions = {}): Promise<Storage> {
  if (databaseUrl.startsWith('sqlite:')) {
    const path = databaseUrl.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (!path) throw new Error("DATABASE_URL 'sqlite:' needs a path, e.g. sqlite:./data/tollgate.db");
    return createSqliteStorage(path, { checkpoints: options.sqliteCheckpoints ?? true });
  }
  if (databaseUrl.startsWith('postgres://') || databaseUrl.startsWith('postgresql://')) {
    const { createPostgresStorage } = await import('./postgres/postgres-storage.js');
    return createPostgresStorage(databaseUrl);
  }
  throw new Error(`DATABASE_URL must start with 'sqlite:' or 'postgres://', got '${databaseUrl.split(':')[0]}:…'`);
}
