/**
 * The storage contract: one suite, run against every backend (Kysely style). A backend is done
 * when it passes this file unchanged; expected values are literal, so passing on both backends
 * means both return exactly the same thing for the same data.
 *
 * PostgreSQL tests use a fresh database per run (test/support/postgres-test-database.ts). When
 * the server is unreachable they are skipped locally and fail under CI.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { postgresMigrations } from '../src/storage/postgres/postgres-migrations.js';
import { createPostgresStorage } from '../src/storage/postgres/postgres-storage.js';
import { sqliteMigrations } from '../src/storage/sqlite/sqlite-migrations.js';
import { createSqliteStorage } from '../src/storage/sqlite/sqlite-storage.js';
import type { IdempotencyScope, Storage, StoredResponse, UsageRecord, UsageTotals } from '../src/storage/types.js';
import { createPostgresTestDatabase, postgresUnavailableReason } from './support/postgres-test-database.js';
import { usageRecord } from './support/usage-record.js';

/** One empty database; `open` may be called several times for instances sharing it. */
interface TestDatabase {
  open(): Storage;
  /** Drops every server-side connection to the database, as a server restart would. */
  dropConnections?(): Promise<void>;
  destroy(): Promise<void>;
}

interface Backend {
  name: string;
  versions: number[];
  /** Why the backend cannot run here, or null. */
  unavailable: string | null;
  fresh(): Promise<TestDatabase>;
  /** A storage pointed at a database that is not there, when the backend has such a thing. */
  unreachable?(): Storage;
}

const backends: Backend[] = [
  {
    name: 'sqlite',
    versions: sqliteMigrations.map((migration) => migration.version),
    unavailable: null,
    async fresh() {
      const directory = mkdtempSync(join(tmpdir(), 'tollgate-contract-'));
      return {
        open: () => createSqliteStorage(join(directory, 'tollgate.db')),
        async destroy() {
          rmSync(directory, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'postgres',
    versions: postgresMigrations.map((migration) => migration.version),
    unavailable: await postgresUnavailableReason(),
    async fresh() {
      const database = await createPostgresTestDatabase();
      return {
        // The warning on a dropped idle connection is expected in the reconnect test; keep output clean.
        open: () => createPostgresStorage(database.url, { onConnectionError: () => {} }),
        dropConnections: database.dropConnections,
        destroy: database.drop,
      };
    },
    unreachable: () => createPostgresStorage('postgres://postgres@127.0.0.1:1/tollgate', { onConnectionError: () => {} }),
  },
];

const unique = (label: string) => `${label}_${randomBytes(6).toString('hex')}`;

const zeroTotals: UsageTotals = {
  requests: 0,
  promptTokens: 0,
  completionTokens: 0,
  totalTokens: 0,
  cachedTokens: 0,
  reasoningTokens: 0,
  estimatedRequests: 0,
  costNanoUsd: 0,
  unpricedRequests: 0,
};

/** Lists order by creation time, then id: two rows made in the same millisecond sort by id. */
function inCreationOrder<T extends { createdAt: string; id: string }>(items: T[]): T[] {
  return [...items].sort((x, y) => x.createdAt.localeCompare(y.createdAt) || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
}

/** The interface leaves the order of budgets and rate limits open; compare them sorted. */
function byKey<T extends { keyId: string | null }>(items: T[]): T[] {
  return [...items].sort((x, y) => String(x.keyId).localeCompare(String(y.keyId)));
}

function usage(accountId: string, overrides: Partial<UsageRecord> = {}): UsageRecord {
  return usageRecord({ requestId: unique('req'), accountId, latencyMs: 100, createdAt: '2030-01-01T00:00:00.000Z', ...overrides });
}

for (const backend of backends) {
  const skip = backend.unavailable && !process.env.CI ? `${backend.unavailable} (set CI to make this a failure)` : false;

  describe(`storage contract: ${backend.name}`, { skip }, () => {
    let database: TestDatabase;
    let storage: Storage;

    before(async () => {
      if (backend.unavailable) throw new Error(`${backend.unavailable}; CI is set, so the ${backend.name} contract tests fail instead of skipping`);
      database = await backend.fresh();
      storage = database.open();
      await storage.migrate();
    });

    after(async () => {
      await storage?.close();
      await database?.destroy();
    });

    async function account(): Promise<string> {
      return (await storage.createAccount(unique('account'))).id;
    }

    test('migrate applies every version once; a second call applies nothing', async () => {
      const empty = await backend.fresh();
      const instance = empty.open();
      try {
        assert.deepEqual(await instance.migrate(), backend.versions);
        assert.deepEqual(await instance.migrate(), []);
        await instance.ping();
      } finally {
        await instance.close();
        await empty.destroy();
      }
    });

    test('two instances migrating one database together apply each version once', async () => {
      const empty = await backend.fresh();
      const first = empty.open();
      const second = empty.open();
      try {
        const [a, b] = await Promise.all([first.migrate(), second.migrate()]);
        assert.deepEqual(
          [...a, ...b].sort((x, y) => x - y),
          backend.versions,
        );
        assert.deepEqual(await first.migrate(), []);
      } finally {
        await first.close();
        await second.close();
        await empty.destroy();
      }
    });

    test('ping resolves on a live database', async () => {
      await storage.ping();
    });

    if (backend.unreachable) {
      test('ping rejects when the database is unreachable', async () => {
        const nowhere = backend.unreachable!();
        try {
          await assert.rejects(nowhere.ping());
          await assert.rejects(nowhere.listAccounts(), { status: 503, code: 'storage_unavailable' });
        } finally {
          await nowhere.close();
        }
      });
    }

    test('a database the storage cannot use: reads and writes reject with the 503 storage_unavailable', async () => {
      const closed = database.open();
      await closed.close();
      const calls = [
        () => closed.listAccounts(),
        () => closed.createAccount(unique('late')),
        () => closed.getKeyWithHash('key_missing'),
        () => closed.queryUsage({}),
        () => closed.setBudget({ accountId: 'acct_missing', keyId: null, unit: 'tokens', limit: 1, period: 'day' }),
        () => closed.claimIdempotencyKey({ ...idempotencyScope('acct_missing'), token: 't', fingerprint: 'f', now: hour(0), expiresAt: hour(1) }),
      ];
      for (const call of calls) await assert.rejects(call(), { status: 503, code: 'storage_unavailable' });
    });

    test('accounts: create, get, list in creation order, count', async () => {
      const countBefore = await storage.countAccounts();
      const first = await storage.createAccount(unique('first'));
      const second = await storage.createAccount(unique('second'));
      assert.match(first.id, /^acct_/);
      assert.match(first.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.deepEqual(await storage.getAccount(first.id), first);
      assert.equal(await storage.getAccount('acct_missing'), null);
      const listed = (await storage.listAccounts()).filter((item) => item.id === first.id || item.id === second.id);
      assert.deepEqual(listed, inCreationOrder([first, second]));
      const count = await storage.countAccounts();
      assert.equal(typeof count, 'number');
      assert.equal(count, countBefore + 2);
    });

    test('accounts: a duplicate name is refused', async () => {
      const name = unique('taken');
      await storage.createAccount(name);
      await assert.rejects(storage.createAccount(name), { message: `an account named '${name}' already exists`, status: 409, code: 'account_exists' });
    });

    test('keys: create, get with hash, list per account, revoke once', async () => {
      const accountId = await account();
      const otherAccountId = await account();
      const input = { accountId, name: 'ci', prefix: 'tg_abc123', secretHash: 'a'.repeat(64), id: unique('key') };
      const key = await storage.createKey(input);
      assert.deepEqual(key, { id: input.id, accountId, name: 'ci', prefix: 'tg_abc123', createdAt: key.createdAt, revokedAt: null });
      const unnamed = await storage.createKey({ ...input, id: unique('key'), name: null, secretHash: 'b'.repeat(64) });
      await storage.createKey({ ...input, id: unique('key'), accountId: otherAccountId });

      assert.deepEqual(await storage.getKeyWithHash(key.id), { ...key, secretHash: 'a'.repeat(64) });
      assert.equal(await storage.getKeyWithHash('key_missing'), null);
      assert.deepEqual(await storage.listKeys(accountId), inCreationOrder([key, unnamed]));

      const told: string[] = [];
      const unwatch = storage.watchKeys((keyId) => told.push(keyId));
      assert.equal(await storage.revokeKey(key.id), true);
      assert.equal(await storage.revokeKey(key.id), false);
      assert.equal(await storage.revokeKey('key_missing'), false);
      unwatch();
      assert.equal(await storage.revokeKey(unnamed.id), true);
      assert.deepEqual(told, [key.id], 'watchers hear each effective revocation once, until they unsubscribe');
      const revoked = await storage.getKeyWithHash(key.id);
      assert.match(revoked?.revokedAt ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.equal(revoked?.secretHash, 'a'.repeat(64));
      assert.equal((await storage.listKeys(accountId)).find((item) => item.id === key.id)?.revokedAt, revoked?.revokedAt);
    });

    test('usage: a record is inserted once; a duplicate request id changes nothing', async () => {
      const accountId = await account();
      const record = usage(accountId);
      assert.equal(await storage.recordUsage(record), true);
      const totals = (await storage.queryUsage({ accountId })).totals;
      assert.equal(await storage.recordUsage({ ...record, promptTokens: 999, totalTokens: 1004, outcome: 'error' }), false);
      assert.deepEqual(await storage.getUsageRecord(record.requestId), record);
      assert.deepEqual((await storage.queryUsage({ accountId })).totals, totals);
      assert.equal(totals.requests, 1);
    });

    test('usage: every field round-trips, nulls, booleans and fractions included', async () => {
      const accountId = await account();
      const full = usage(accountId, {
        keyId: unique('key'),
        model: 'anthropic/claude-3-haiku',
        vendor: 'anthropic',
        promptTokens: 3_000_000_000,
        completionTokens: 7,
        totalTokens: 3_000_000_007,
        cachedTokens: 2,
        reasoningTokens: 0,
        estimated: true,
        stream: true,
        outcome: 'vendor_error',
        status: 502,
        errorCode: 'upstream_error',
        latencyMs: 12.345,
        ttftMs: 3.5,
        createdAt: '2030-06-15T08:09:10.123Z',
      });
      const sparse = usage(accountId, {
        model: 'x'.repeat(200),
        vendor: null,
        promptTokens: 0,
        completionTokens: 0,
        totalTokens: 0,
        outcome: 'invalid_request',
        status: 400,
        errorCode: 'invalid_request_error',
        latencyMs: 0.25,
      });
      for (const record of [full, sparse]) {
        assert.equal(await storage.recordUsage(record), true);
        assert.deepEqual(await storage.getUsageRecord(record.requestId), record);
      }
      assert.equal(await storage.getUsageRecord('req_missing'), null);
    });

    test('usage: totals and groups by model, day and key, with inclusive since and exclusive until', async () => {
      const accountId = await account();
      const otherAccountId = await account();
      const at = (time: string) => `2031-03-${time}Z`;
      const records = [
        usage(accountId, {
          model: 'openai/alpha',
          keyId: 'key_b',
          createdAt: at('01T00:00:00.000'),
          promptTokens: 1,
          completionTokens: 2,
          totalTokens: 3,
          cachedTokens: 1,
          costNanoUsd: 3_000,
        }),
        usage(accountId, {
          model: 'openai/Zeta',
          keyId: 'key_a',
          createdAt: at('01T23:59:59.999'),
          promptTokens: 10,
          completionTokens: 20,
          totalTokens: 30,
          reasoningTokens: 4,
          costNanoUsd: null,
          estimated: true,
        }),
        usage(accountId, {
          model: 'openai/alpha',
          keyId: null,
          createdAt: at('02T00:00:00.000'),
          promptTokens: 100,
          completionTokens: 200,
          totalTokens: 300,
          cachedTokens: 50,
          costNanoUsd: 300_000,
        }),
        usage(accountId, {
          model: 'openai/alpha',
          keyId: 'key_a',
          createdAt: at('03T12:00:00.000'),
          promptTokens: 1000,
          completionTokens: 2000,
          totalTokens: 3000,
          estimated: true,
          // $3,000: sums pass 2³² nanodollars.
          costNanoUsd: 3_000_000_000_000,
        }),
        usage(otherAccountId, {
          model: 'openai/alpha',
          keyId: 'key_z',
          createdAt: at('02T00:00:00.000'),
          promptTokens: 5,
          completionTokens: 5,
          totalTokens: 10,
          costNanoUsd: 10,
        }),
      ];
      for (const record of records) assert.equal(await storage.recordUsage(record), true);
      const totals = (
        requests: number,
        promptTokens: number,
        completionTokens: number,
        cachedTokens: number,
        reasoningTokens: number,
        estimatedRequests: number,
        costNanoUsd: number,
        unpricedRequests: number,
      ): UsageTotals => ({
        requests,
        promptTokens,
        completionTokens,
        totalTokens: promptTokens + completionTokens,
        cachedTokens,
        reasoningTokens,
        estimatedRequests,
        costNanoUsd,
        unpricedRequests,
      });

      assert.deepEqual(await storage.queryUsage({ accountId }), { groups: [], totals: totals(4, 1111, 2222, 51, 4, 2, 3_000_000_303_000, 1) });
      assert.deepEqual(await storage.queryUsage({ accountId: 'acct_nobody' }), { groups: [], totals: zeroTotals });

      // Byte order, as SQLite sorts: 'Z' (0x5a) before 'a' (0x61).
      assert.deepEqual((await storage.queryUsage({ accountId, groupBy: 'model' })).groups, [
        { group: 'openai/Zeta', ...totals(1, 10, 20, 0, 4, 1, 0, 1) },
        { group: 'openai/alpha', ...totals(3, 1101, 2202, 51, 0, 1, 3_000_000_303_000, 0) },
      ]);
      assert.deepEqual((await storage.queryUsage({ accountId, groupBy: 'day' })).groups, [
        { group: '2031-03-01', ...totals(2, 11, 22, 1, 4, 1, 3_000, 1) },
        { group: '2031-03-02', ...totals(1, 100, 200, 50, 0, 0, 300_000, 0) },
        { group: '2031-03-03', ...totals(1, 1000, 2000, 0, 0, 1, 3_000_000_000_000, 0) },
      ]);
      // Requests without a key form the null group, first.
      assert.deepEqual((await storage.queryUsage({ accountId, groupBy: 'key' })).groups, [
        { group: null, ...totals(1, 100, 200, 50, 0, 0, 300_000, 0) },
        { group: 'key_a', ...totals(2, 1010, 2020, 0, 4, 2, 3_000_000_000_000, 1) },
        { group: 'key_b', ...totals(1, 1, 2, 1, 0, 0, 3_000, 0) },
      ]);

      const window = { since: at('01T23:59:59.999'), until: at('03T12:00:00.000') };
      assert.deepEqual(await storage.queryUsage({ accountId, ...window, groupBy: 'day' }), {
        groups: [
          { group: '2031-03-01', ...totals(1, 10, 20, 0, 4, 1, 0, 1) },
          { group: '2031-03-02', ...totals(1, 100, 200, 50, 0, 0, 300_000, 0) },
        ],
        totals: totals(2, 110, 220, 50, 4, 1, 300_000, 1),
      });
      // Without an account (admin) every account in the window counts.
      assert.deepEqual((await storage.queryUsage({ ...window, groupBy: 'key' })).groups, [
        { group: null, ...totals(1, 100, 200, 50, 0, 0, 300_000, 0) },
        { group: 'key_a', ...totals(1, 10, 20, 0, 4, 1, 0, 1) },
        { group: 'key_z', ...totals(1, 5, 5, 0, 0, 0, 10, 0) },
      ]);
      assert.deepEqual(await storage.queryUsage({ accountId, since: at('04T00:00:00.000'), groupBy: 'model' }), { groups: [], totals: zeroTotals });
      // Bounds are instants, however ISO 8601 spells them: no milliseconds, an offset, a bare date.
      assert.deepEqual(
        (await storage.queryUsage({ accountId, since: '2031-03-02T00:00:00Z', until: '2031-03-03T22:00:00+09:00' })).totals,
        totals(2, 1100, 2200, 50, 0, 1, 3_000_000_300_000, 0),
      );
      assert.deepEqual((await storage.queryUsage({ accountId, since: '2031-03-02', until: '2031-03-03' })).totals, totals(1, 100, 200, 50, 0, 0, 300_000, 0));
    });

    test('usage: recent records come newest first, limited, per account or all', async () => {
      const accountId = await account();
      const otherAccountId = await account();
      const oldest = usage(accountId, { createdAt: '2032-01-01T00:00:00.000Z' });
      const tiedLow = usage(accountId, { requestId: 'req_recent_a', createdAt: '2032-01-02T00:00:00.000Z' });
      const tiedHigh = usage(accountId, { requestId: 'req_recent_b', createdAt: '2032-01-02T00:00:00.000Z' });
      const newest = usage(accountId, { createdAt: '2032-01-03T00:00:00.000Z' });
      // Later than anything else in the suite, so it leads the all-accounts list.
      const elsewhere = usage(otherAccountId, { createdAt: '2099-01-01T00:00:00.000Z' });
      for (const record of [tiedLow, newest, oldest, elsewhere, tiedHigh]) await storage.recordUsage(record);

      assert.deepEqual(await storage.recentUsage({ accountId, limit: 3 }), [newest, tiedHigh, tiedLow]);
      assert.deepEqual(await storage.recentUsage({ accountId, limit: 10 }), [newest, tiedHigh, tiedLow, oldest]);
      assert.deepEqual(await storage.recentUsage({ limit: 1 }), [elsewhere]);
      assert.deepEqual(await storage.recentUsage({ accountId: 'acct_nobody', limit: 5 }), []);
    });

    test('usage: sumUsage of tokens or nanodollars per account, per key, since an instant', async () => {
      const accountId = await account();
      await storage.recordUsage(
        usage(accountId, { keyId: 'key_sum_a', totalTokens: 4_000_000_000, costNanoUsd: 9_000_000_000_000_000, createdAt: '2033-01-01T00:00:00.000Z' }),
      );
      await storage.recordUsage(usage(accountId, { keyId: 'key_sum_b', totalTokens: 20, costNanoUsd: null, createdAt: '2033-01-02T00:00:00.000Z' }));
      await storage.recordUsage(usage(accountId, { keyId: 'key_sum_a', totalTokens: 300, costNanoUsd: 7, createdAt: '2033-01-03T00:00:00.000Z' }));

      // A record without a price adds nothing to a sum of dollars.
      assert.equal(await storage.sumUsage({ accountId, unit: 'usd' }), 9_000_000_000_000_007);
      assert.equal(await storage.sumUsage({ accountId, keyId: 'key_sum_b', unit: 'usd' }), 0);
      assert.equal(await storage.sumUsage({ accountId, since: '2033-01-02T00:00:00.000Z', unit: 'usd' }), 7);

      assert.equal(await storage.sumUsage({ accountId, unit: 'tokens' }), 4_000_000_320);
      assert.equal(await storage.sumUsage({ accountId, keyId: null, unit: 'tokens' }), 4_000_000_320);
      assert.equal(await storage.sumUsage({ accountId, keyId: 'key_sum_a', unit: 'tokens' }), 4_000_000_300);
      assert.equal(await storage.sumUsage({ accountId, since: '2033-01-02T00:00:00.000Z', unit: 'tokens' }), 320);
      assert.equal(await storage.sumUsage({ accountId, keyId: 'key_sum_a', since: '2033-01-02T00:00:00.000Z', unit: 'tokens' }), 300);
      assert.equal(await storage.sumUsage({ accountId, since: '2033-01-02T09:00:00+09:00', unit: 'tokens' }), 320);
      assert.equal(await storage.sumUsage({ accountId: 'acct_nobody', unit: 'tokens' }), 0);
    });

    test('budgets: account-wide and per key, updated in place', async () => {
      const accountId = await account();
      await storage.setBudget({ accountId, keyId: null, unit: 'tokens', limit: 5_000_000_000, period: 'month' });
      await storage.setBudget({ accountId, keyId: 'key_budget', unit: 'tokens', limit: 1000, period: 'day' });

      assert.deepEqual(
        byKey(await storage.getBudgets(accountId, 'key_budget')),
        byKey([
          { accountId, keyId: null, unit: 'tokens', limit: 5_000_000_000, period: 'month' },
          { accountId, keyId: 'key_budget', unit: 'tokens', limit: 1000, period: 'day' },
        ]),
      );
      assert.deepEqual(await storage.getBudgets(accountId, null), [{ accountId, keyId: null, unit: 'tokens', limit: 5_000_000_000, period: 'month' }]);
      assert.deepEqual(await storage.getBudgets(accountId, 'key_other'), [{ accountId, keyId: null, unit: 'tokens', limit: 5_000_000_000, period: 'month' }]);
      assert.deepEqual(await storage.getBudgets('acct_nobody', 'key_budget'), []);

      await storage.setBudget({ accountId, keyId: 'key_budget', unit: 'tokens', limit: 2000, period: 'total' });
      await storage.setBudget({ accountId, keyId: null, unit: 'tokens', limit: 7, period: 'day' });
      assert.deepEqual(await storage.listBudgets(accountId), [
        { accountId, keyId: null, unit: 'tokens', limit: 7, period: 'day' },
        { accountId, keyId: 'key_budget', unit: 'tokens', limit: 2000, period: 'total' },
      ]);
    });

    test('budgets: a token budget and a USD budget of one scope live side by side', async () => {
      const accountId = await account();
      await storage.setBudget({ accountId, keyId: null, unit: 'tokens', limit: 1000, period: 'day' });
      await storage.setBudget({ accountId, keyId: null, unit: 'usd', limit: 2_500_000_000, period: 'month' });
      await storage.setBudget({ accountId, keyId: null, unit: 'usd', limit: 12_500_000_000, period: 'month' });
      assert.deepEqual(await storage.getBudgets(accountId, null), [
        { accountId, keyId: null, unit: 'tokens', limit: 1000, period: 'day' },
        { accountId, keyId: null, unit: 'usd', limit: 12_500_000_000, period: 'month' },
      ]);
    });

    test('rate limits: account and key scopes, updated in place', async () => {
      const accountId = await account();
      await storage.setRateLimit({ accountId, keyId: null, rpm: 60, tpm: 3_000_000_000 });
      await storage.setRateLimit({ accountId: null, keyId: 'key_limited', rpm: null, tpm: 1000 });

      assert.deepEqual(
        byKey(await storage.getRateLimits(accountId, 'key_limited')),
        byKey([
          { accountId, keyId: null, rpm: 60, tpm: 3_000_000_000 },
          { accountId: null, keyId: 'key_limited', rpm: null, tpm: 1000 },
        ]),
      );
      assert.deepEqual(await storage.getRateLimits(accountId, null), [{ accountId, keyId: null, rpm: 60, tpm: 3_000_000_000 }]);
      assert.deepEqual(await storage.getRateLimits('acct_nobody', null), []);

      await storage.setRateLimit({ accountId, keyId: null, rpm: 120, tpm: null });
      await storage.setRateLimit({ accountId: null, keyId: 'key_limited', rpm: 5, tpm: null });
      assert.deepEqual(
        byKey(await storage.getRateLimits(accountId, 'key_limited')),
        byKey([
          { accountId, keyId: null, rpm: 120, tpm: null },
          { accountId: null, keyId: 'key_limited', rpm: 5, tpm: null },
        ]),
      );
    });

    test('usage: 200 concurrent records all land', async () => {
      const accountId = await account();
      const records = Array.from({ length: 200 }, (_, index) =>
        usage(accountId, {
          totalTokens: index,
          promptTokens: index,
          completionTokens: 0,
          createdAt: `2034-01-01T00:00:${String(index % 60).padStart(2, '0')}.000Z`,
        }),
      );
      const inserted = await Promise.all(records.map((record) => storage.recordUsage(record)));
      assert.equal(inserted.filter(Boolean).length, 200);
      const { totals } = await storage.queryUsage({ accountId });
      assert.equal(totals.requests, 200);
      assert.equal(totals.totalTokens, (199 * 200) / 2);
    });

    test('usage: records written at once settle each on its own: a repeated request id once, a record that cannot be stored alone', async () => {
      const accountId = await account();
      const good = Array.from({ length: 6 }, (_, index) => usage(accountId, { totalTokens: index + 1, promptTokens: index + 1, completionTokens: 0 }));
      const repeated = { ...good[2], outcome: 'error' as const };
      const unstorable = { ...usage(accountId), accountId: null as unknown as string };
      const settled = await Promise.allSettled([...good.slice(0, 3), repeated, unstorable, ...good.slice(3)].map((record) => storage.recordUsage(record)));
      assert.deepEqual(
        settled.map((result) => result.status),
        ['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled'],
      );
      const values = settled.map((result) => (result.status === 'fulfilled' ? result.value : null));
      assert.deepEqual(values, [true, true, true, false, null, true, true, true], 'the repeated id reports "already recorded"');
      for (const record of good) assert.deepEqual(await storage.getUsageRecord(record.requestId), record);
      assert.equal(await storage.getUsageRecord(unstorable.requestId), null);
      assert.equal((await storage.queryUsage({ accountId })).totals.totalTokens, 21);
    });

    test("usage: a NUL in the model (the caller's text) is stored as U+FFFD", async () => {
      const accountId = await account();
      const record = usage(accountId, { model: 'openai/a\u0000b\u0000' });
      assert.equal(await storage.recordUsage(record), true);
      assert.deepEqual(await storage.getUsageRecord(record.requestId), { ...record, model: 'openai/a\uFFFDb\uFFFD' });
    });

    const hour = (hours: number) => new Date(Date.UTC(2031, 0, 1) + hours * 3_600_000).toISOString();
    const idempotencyScope = (accountId: string, route = '/v5/completions'): IdempotencyScope => ({ accountId, route, key: unique('key') });
    /** Every byte value, so a text round trip would show. */
    const storedResponse: StoredResponse = {
      status: 200,
      headers: { 'content-type': 'text/event-stream; charset=utf-8', 'x-tollgate-emulated': 'n' },
      body: Buffer.from(Array.from({ length: 256 }, (_, index) => index)),
    };

    test('idempotency: a claim holds the key; its response is stored byte for byte and found by the next claim', async () => {
      const scope = idempotencyScope(await account());
      const first = { ...scope, token: 'first', fingerprint: 'f1', now: hour(0), expiresAt: hour(1) };
      assert.equal(await storage.claimIdempotencyKey(first), null);
      const running = await storage.claimIdempotencyKey({ ...first, token: 'second', fingerprint: 'f2', now: hour(0.5) });
      assert.deepEqual(running, { ...scope, fingerprint: 'f1', completionId: null, response: null, createdAt: hour(0), expiresAt: hour(1) });
      assert.equal(
        await storage.completeIdempotencyKey({ ...scope, token: 'second', completionId: 'cmpl-x', response: storedResponse, expiresAt: hour(24) }),
        false,
      );
      assert.equal(await storage.renewIdempotencyKey({ ...scope, token: 'first', expiresAt: hour(2) }), true);
      assert.equal(
        await storage.completeIdempotencyKey({ ...scope, token: 'first', completionId: 'cmpl-1', response: storedResponse, expiresAt: hour(24) }),
        true,
      );
      const done = await storage.claimIdempotencyKey({ ...first, token: 'third', now: hour(23) });
      assert.deepEqual(done, { ...scope, fingerprint: 'f1', completionId: 'cmpl-1', response: storedResponse, createdAt: hour(0), expiresAt: hour(24) });
      assert.ok(Buffer.isBuffer(done?.response?.body));
      // A completed entry is not a claim any more: neither completed again nor released.
      assert.equal(
        await storage.completeIdempotencyKey({ ...scope, token: 'first', completionId: 'cmpl-2', response: storedResponse, expiresAt: hour(48) }),
        false,
      );
      assert.equal(await storage.releaseIdempotencyKey({ ...scope, token: 'first' }), false);
      assert.equal(await storage.renewIdempotencyKey({ ...scope, token: 'first', expiresAt: hour(48) }), false);
    });

    test('idempotency: a released claim frees the key; only its holder releases it', async () => {
      const scope = idempotencyScope(await account());
      const claim = { ...scope, token: 'a', fingerprint: 'f', now: hour(0), expiresAt: hour(1) };
      assert.equal(await storage.claimIdempotencyKey(claim), null);
      assert.equal(await storage.releaseIdempotencyKey({ ...scope, token: 'b' }), false);
      assert.equal(await storage.releaseIdempotencyKey({ ...scope, token: 'a' }), true);
      assert.equal(await storage.claimIdempotencyKey({ ...claim, token: 'b', fingerprint: 'other' }), null);
    });

    test('idempotency: an expired claim or response is taken over, and its old holder can no longer complete it', async () => {
      const scope = idempotencyScope(await account());
      assert.equal(await storage.claimIdempotencyKey({ ...scope, token: 'crashed', fingerprint: 'f', now: hour(0), expiresAt: hour(1) }), null);
      assert.equal(await storage.claimIdempotencyKey({ ...scope, token: 'next', fingerprint: 'g', now: hour(1), expiresAt: hour(2) }), null);
      assert.equal(
        await storage.completeIdempotencyKey({ ...scope, token: 'crashed', completionId: 'c', response: storedResponse, expiresAt: hour(24) }),
        false,
      );
      assert.equal(await storage.completeIdempotencyKey({ ...scope, token: 'next', completionId: 'c2', response: storedResponse, expiresAt: hour(25) }), true);
      assert.notEqual(await storage.claimIdempotencyKey({ ...scope, token: 'early', fingerprint: 'h', now: hour(24.9), expiresAt: hour(26) }), null);
      assert.equal(await storage.claimIdempotencyKey({ ...scope, token: 'late', fingerprint: 'h', now: hour(25), expiresAt: hour(26) }), null);
      const entry = await storage.claimIdempotencyKey({ ...scope, token: 'probe', fingerprint: 'h', now: hour(25.5), expiresAt: hour(26) });
      assert.deepEqual(entry, { ...scope, fingerprint: 'h', completionId: null, response: null, createdAt: hour(25), expiresAt: hour(26) });
    });

    test('idempotency: the same key under another account or route is another entry', async () => {
      const scope = idempotencyScope(await account());
      const claim = { ...scope, token: 't', fingerprint: 'f', now: hour(0), expiresAt: hour(1) };
      assert.equal(await storage.claimIdempotencyKey(claim), null);
      assert.equal(await storage.claimIdempotencyKey({ ...claim, accountId: await account() }), null);
      assert.equal(await storage.claimIdempotencyKey({ ...claim, route: '/v5/chat/completions' }), null);
      assert.notEqual(await storage.claimIdempotencyKey(claim), null);
    });

    test('idempotency: of concurrent claims from two instances exactly one wins', async () => {
      const scope = idempotencyScope(await account());
      const other = database.open();
      try {
        const claims = Array.from({ length: 20 }, (_, index) =>
          (index % 2 ? other : storage).claimIdempotencyKey({ ...scope, token: `t${index}`, fingerprint: 'f', now: hour(0), expiresAt: hour(1) }),
        );
        const results = await Promise.all(claims);
        assert.equal(results.filter((result) => result === null).length, 1);
      } finally {
        await other.close();
      }
    });

    test('idempotency: a purge deletes only expired entries, at most `limit` of them', async () => {
      const accountId = await account();
      // Far in the future, so entries other tests left behind are expired too and the counts stay exact.
      const base = Date.UTC(2090, 0, 1);
      const at = (minutes: number) => new Date(base + minutes * 60_000).toISOString();
      const scopes = Array.from({ length: 5 }, () => idempotencyScope(accountId));
      for (const [index, scope] of scopes.entries()) {
        await storage.claimIdempotencyKey({ ...scope, token: 't', fingerprint: 'f', now: at(index - 10), expiresAt: at(index) });
      }
      await storage.purgeIdempotencyKeys({ now: at(-1), limit: 1_000 });
      assert.equal(await storage.purgeIdempotencyKeys({ now: at(2), limit: 2 }), 2);
      assert.equal(await storage.purgeIdempotencyKeys({ now: at(2), limit: 2 }), 1);
      assert.equal(await storage.purgeIdempotencyKeys({ now: at(2), limit: 2 }), 0);
      for (const [index, scope] of scopes.entries()) {
        const entry = await storage.claimIdempotencyKey({ ...scope, token: 'probe', fingerprint: 'f', now: at(2), expiresAt: at(9) });
        assert.equal(entry === null, index <= 2, `entry ${index}`);
      }
    });

    test('survives the server dropping every connection', async (context) => {
      if (!database.dropConnections) return context.skip(`${backend.name} has no server connections to drop`);
      await storage.ping();
      await database.dropConnections();
      // Give the idle clients' sockets time to report the termination.
      await new Promise((resolve) => setTimeout(resolve, 200));
      await storage.ping();
    });

    test('close writes the usage records still queued before it lets the database go', async () => {
      const accountId = await account();
      const instance = database.open();
      const records = Array.from({ length: 40 }, (_, index) => usage(accountId, { totalTokens: index, promptTokens: index, completionTokens: 0 }));
      const written = records.map((record) => instance.recordUsage(record));
      await instance.close();
      assert.deepEqual(
        await Promise.all(written),
        records.map(() => true),
      );
      for (const record of records) assert.deepEqual(await storage.getUsageRecord(record.requestId), record);
    });

    test('close releases the database; the instance is unusable afterwards', async () => {
      const instance = database.open();
      await instance.ping();
      await instance.close();
      await assert.rejects(instance.ping());
    });
  });
}
