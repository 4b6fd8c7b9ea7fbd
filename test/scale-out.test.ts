/**
 * Several gateway processes on different ports sharing PostgreSQL and Redis: limits hold across
 * all of them, budgets never overshoot, the ledger equals what clients received, and a rolling
 * restart under load fails no request and loses no record.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateKey } from '../src/auth/api-keys.js';
import { createPostgresStorage } from '../src/storage/postgres/postgres-storage.js';
import type { Storage } from '../src/storage/types.js';
import { createPostgresTestDatabase, postgresUnavailableReason, type PostgresTestDatabase } from './support/postgres-test-database.js';
import { spawnGateway, type GatewayProcess } from './support/gateway-process.js';
import { REDIS_URL, redisUnavailableReason } from './support/redis-test-server.js';

const MODEL = 'local/tollgate-small';

const unavailable = (await postgresUnavailableReason()) ?? (await redisUnavailableReason());
const skip = unavailable && !process.env.CI ? `${unavailable} (set CI to make this a failure)` : false;

describe('scale out on PostgreSQL and Redis', { skip }, () => {
  let database: PostgresTestDatabase;
  let storage: Storage;
  const instances: GatewayProcess[] = [];
  let env: Record<string, string>;

  before(async () => {
    if (unavailable) throw new Error(`${unavailable}; CI is set, so the scale-out tests fail instead of skipping`);
    database = await createPostgresTestDatabase();
    env = { DATABASE_URL: database.url, REDIS_URL, TOLLGATE_POLICY_CACHE_MS: '0', TOLLGATE_SHUTDOWN_GRACE_MS: '10000' };
    instances.push(await spawnGateway(env, ['serve', '--workers', '2']));
    instances.push(await spawnGateway(env, ['serve', '--workers', '1']));
    storage = createPostgresStorage(database.url);
  });

  after(async () => {
    for (const instance of instances) instance.child.kill('SIGKILL');
    await storage?.close();
    await database?.drop();
  });

  async function account(name: string) {
    const created = await storage.createAccount(`${name}-${Math.random().toString(36).slice(2)}`);
    const key = generateKey();
    await storage.createKey({ id: key.id, accountId: created.id, name: null, prefix: key.prefix, secretHash: key.secretHash });
    return { accountId: created.id, key: key.key };
  }

  async function call(url: string, key: string, body: Record<string, unknown> = {}) {
    const response = await fetch(`${url}/v5/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ model: MODEL, prompt: 'The nation', max_tokens: 6, ...body }),
    });
    return { status: response.status, body: await response.json().catch(() => null) };
  }

  test('only the first instance prints the first key', () => {
    assert.match(instances[0].stdout(), /tg_[A-Za-z0-9]{12}_[A-Za-z0-9]{32}/);
    assert.doesNotMatch(instances[1].stdout(), /tg_[A-Za-z0-9]{12}_/);
  });

  test('a limit of R requests per minute lets exactly R through across all instances', async () => {
    const { accountId, key } = await account('rpm');
    await storage.setRateLimit({ accountId, keyId: null, rpm: 9, tpm: null });
    const results = await Promise.all(Array.from({ length: 30 }, (_, index) => call(instances[index % 2].url, key, { max_tokens: 1 })));
    assert.equal(results.filter((r) => r.status === 200).length, 9);
    assert.equal(results.filter((r) => r.status === 429).length, 21);
  });

  test('a budget is overshot by 0 tokens under 50 concurrent requests over the instances, and the ledger equals what clients got', async () => {
    const { accountId, key } = await account('budget');
    await storage.setBudget({ accountId, keyId: null, unit: 'tokens', limit: 300, period: 'day' });
    const results = await Promise.all(Array.from({ length: 50 }, (_, index) => call(instances[index % 2].url, key, { max_tokens: 10, temperature: 1 })));
    const ok = results.filter((r) => r.status === 200);
    assert.ok(ok.length > 0 && ok.length < 50, `${ok.length} admitted`);
    const received = ok.reduce((sum, r) => sum + r.body.usage.total_tokens, 0);
    const report = await storage.queryUsage({ accountId });
    assert.ok(report.totals.totalTokens <= 300, `used ${report.totals.totalTokens}`);
    assert.equal(report.totals.totalTokens, received);
    assert.equal(report.totals.requests, 50);
  });

  test('rolling restart under load: no failed request, no missing record', async () => {
    const { accountId, key } = await account('rolling');
    const completed: string[] = [];
    const failures: string[] = [];
    let running = true;
    let turn = 0;
    async function client(): Promise<void> {
      for (let i = 0; i < 2000 && running; i++) {
        let done = false;
        for (let attempt = 0; attempt < 20 && !done; attempt++) {
          const live = instances.filter((instance) => instance.child.exitCode === null);
          const target = live[turn++ % live.length];
          try {
            const result = await call(target.url, key, { max_tokens: 4, stream: false });
            if (result.status === 200) {
              completed.push(result.body.id);
              done = true;
            } else if (result.status !== 503) {
              failures.push(`status ${result.status}`);
              done = true;
            }
          } catch {
            // connection refused by an instance that has stopped listening: try another one
          }
          if (!done) await new Promise((resolve) => setTimeout(resolve, 20));
        }
        if (!done) failures.push('no instance answered');
      }
    }
    const clients = Array.from({ length: 6 }, () => client());
    for (let index = 0; index < instances.length; index++) {
      await new Promise((resolve) => setTimeout(resolve, 400));
      const old = instances[index];
      old.child.kill('SIGTERM');
      assert.equal(await old.exited, 0, 'drains and exits 0');
      instances[index] = await spawnGateway(env, ['serve', '--workers', '1']);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    running = false;
    await Promise.all(clients);
    assert.deepEqual(failures, []);
    assert.ok(completed.length > 20, `${completed.length} completed`);
    const report = await storage.queryUsage({ accountId });
    const missing = [];
    for (const id of completed) if (!(await storage.getUsageRecord(id))) missing.push(id);
    assert.deepEqual(missing, []);
    assert.equal(report.totals.requests - completed.length >= 0, true);
  });
});
