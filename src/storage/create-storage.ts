/** The only module that picks a storage driver, from DATABASE_URL. */
import { createSqliteStorage } from './sqlite/sqlite-storage.js';
import type { Storage } from './types.js';

export class StorageUrlError extends Error {}

export async function createStorage(databaseUrl: string): Promise<Storage> {
  if (databaseUrl.startsWith('sqlite:')) {
    const path = databaseUrl.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (!path) throw new StorageUrlError("DATABASE_URL 'sqlite:' needs a path, e.g. sqlite:./data/tollgate.db");
    return createSqliteStorage(path);
  }
  if (databaseUrl.startsWith('postgres://') || databaseUrl.startsWith('postgresql://')) {
    const { createPostgresStorage } = await import('./postgres/postgres-storage.js');
    return createPostgresStorage(databaseUrl);
  }
  throw new StorageUrlError(`DATABASE_URL must start with 'sqlite:' or 'postgres://', got '${databaseUrl.split(':')[0]}:…'`);
}
