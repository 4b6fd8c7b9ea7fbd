/**
 * A database written by the first schema, upgraded in place: its budgets become token budgets, and
 * its ledger records keep their tokens with no cost (zero where they used none). On both backends.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { postgresMigrations } from '../src/storage/postgres/postgres-migrations.js';
import { createPostgresStorage } from '../src/storage/postgres/postgres-storage.js';
import { sqliteMigrations } from '../src/storage/sqlite/sqlite-migrations.js';
import { createSqliteStorage } from '../src/storage/sqlite/sqlite-storage.js';
import type { Storage } from '../src/storage/types.js';
import { createPostgresTestDatabase, postgresUnavailableReason } from './support/postgres-test-database.js';

/** Rows as the first schema held them: an account, a budget of each scope, a record that used tokens and one that did not. */
const firstSchemaRows = `
  INSERT INTO accounts (id, name, created_at) VALUES ('acct_old', 'old', '2030-01-01T00:00:00.000Z');
  INSERT INTO budgets (account_id, key_id, tokens, period) VALUES ('acct_old', '', 5000000000, 'month'), ('acct_old', 'key_old', 100, 'day');
  INSERT INTO usage_records (request_id, account_id, key_id, model, vendor, prompt_tokens, completion_tokens, total_tokens,
    cached_tokens, reasoning_tokens, estimated, stream, outcome, status, error_code, latency_ms, ttft_ms, created_at)
  VALUES
    ('cmpl-used', 'acct_old', NULL, 'openai/gpt-4o', 'openai', 10, 5, 15, NULL, NULL, FALSE, FALSE, 'success', 200, NULL, 1, NULL, '2030-01-01T00:00:00.000Z'),
    ('cmpl-refused', 'acct_old', NULL, 'openai/gpt-4o', NULL, 0, 0, 0, NULL, NULL, FALSE, FALSE, 'invalid_request', 400, 'invalid_value', 1, NULL, '2030-01-01T00:00:01.000Z');
`;

interface Backend {
  name: string;
  unavailable: string | null;
  /** A database at schema version 1 holding `firstSchemaRows`, and a storage opened on it. */
  atFirstSchema(): Promise<{ storage: Storage; destroy(): Promise<void> }>;
  laterVersions: number[];
}

const backends: Backend[] = [
  {
    name: 'sqlite',
    unavailable: null,
    laterVersions: sqliteMigrations.slice(1).map((migration) => migration.version),
    async atFirstSchema() {
      const directory = mkdtempSync(join(tmpdir(), 'tollgate-upgrade-'));
      const path = join(directory, 'tollgate.db');
      const db = new Database(path);
      db.exec(sqliteMigrations[0].sql);
      db.exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL);
        INSERT INTO schema_migrations VALUES (1, '2030-01-01T00:00:00.000Z');`);
      db.exec(firstSchemaRows);
      db.close();
      return { storage: createSqliteStorage(path), destroy: async () => rmSync(directory, { recursive: true, force: true }) };
    },
  },
  {
    name: 'postgres',
    unavailable: await postgresUnavailableReason(),
    laterVersions: postgresMigrations.slice(1).map((migration) => migration.version),
    async atFirstSchema() {
      const database = await createPostgresTestDatabase();
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      await client.query(postgresMigrations[0].sql);
      await client.query(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL);
        INSERT INTO schema_migrations VALUES (1, now());`);
      await client.query(firstSchemaRows);
      await client.end();
      return { storage: createPostgresStorage(database.url), destroy: database.drop };
    },
  },
];

for (const backend of backends) {
  const skip = backend.unavailable && !process.env.CI ? `${backend.unavailable} (set CI to make this a failure)` : false;
  describe(`storage upgrade: ${backend.name}`, { skip }, () => {
    test('budgets become token budgets; records keep their tokens, with no cost where they used any', async () => {
      if (backend.unavailable) throw new Error(`${backend.unavailable}; CI is set, so this fails instead of skipping`);
      const { storage, destroy } = await backend.atFirstSchema();
      try {
        assert.deepEqual(await storage.migrate(), backend.laterVersions);
        assert.deepEqual(await storage.listBudgets('acct_old'), [
          { accountId: 'acct_old', keyId: null, unit: 'tokens', limit: 5_000_000_000, period: 'month' },
          { accountId: 'acct_old', keyId: 'key_old', unit: 'tokens', limit: 100, period: 'day' },
        ]);
        const used = await storage.getUsageRecord('cmpl-used');
        assert.equal(used?.totalTokens, 15);
        assert.equal(used?.costNanoUsd, null);
        assert.equal((await storage.getUsageRecord('cmpl-refused'))?.costNanoUsd, 0);
        const totals = (await storage.queryUsage({ accountId: 'acct_old' })).totals;
        assert.deepEqual([totals.requests, totals.costNanoUsd, totals.unpricedRequests], [2, 0, 1]);
        // The upgraded table takes a USD budget beside the token one.
        await storage.setBudget({ accountId: 'acct_old', keyId: null, unit: 'usd', limit: 1_000_000_000, period: 'month' });
        assert.equal((await storage.getBudgets('acct_old', null)).length, 2);
      } finally {
        await storage.close();
        await destroy();
      }
    });
  });
}
