/**
 * Redis or PostgreSQL goes away while the gateway runs: requests get a clear 503 (never a crash,
 * never an unmetered success), and service resumes by itself when they come back.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateKey } from '../src/auth/api-keys.js';
import { createPostgresStorage } from '../src/storage/postgres/postgres-storage.js';
import { spawnGateway, type GatewayProcess } from './support/gateway-process.js';
import { privatePostgresAvailable, redisAvailable, startPrivatePostgres, startPrivateRedis, type PrivateServer } from './support/private-servers.js';

const missing = !redisAvailable()
  ? 'redis-server is not installed'
  : !privatePostgresAvailable()
    ? 'PostgreSQL binaries or the postgres user are missing'
    : null;
const skip = missing && !process.env.CI ? missing : false;

async function until<T>(work: () => Promise<T>, ok: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T = await work();
  while (!ok(last) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    last = await work();
  }
  return last;
}

describe('outages of the servers the gateway depends on', { skip }, () => {
  let redis: PrivateServer;
  let postgres: PrivateServer;
  let gateway: GatewayProcess;
  let limitedKey: string;
  let limitedAccount: string;
  const adminKey = 'admin-key-for-the-outage-test';

  before(async () => {
    if (missing) throw new Error(`${missing}; CI is set, so the outage tests fail instead of skipping`);
    redis = await startPrivateRedis();
    postgres = await startPrivatePostgres();
    const storage = createPostgresStorage(postgres.url);
    await storage.migrate();
    const account = await storage.createAccount('limited');
    const key = generateKey();
    await storage.createKey({ id: key.id, accountId: account.id, name: null, prefix: key.prefix, secretHash: key.secretHash });
    await storage.setRateLimit({ accountId: account.id, keyId: null, rpm: 10_000, tpm: null });
    await storage.close();
    limitedKey = key.key;
    limitedAccount = account.id;
    gateway = await spawnGateway({ DATABASE_URL: postgres.url, REDIS_URL: redis.url, TOLLGATE_POLICY_CACHE_MS: '0', TOLLGATE_ADMIN_KEY: adminKey }, [
      'serve',
      '--workers',
      '1',
    ]);
  });

  after(async () => {
    gateway?.child.kill('SIGKILL');
    await redis?.destroy();
    await postgres?.destroy();
  });

  const call = async () => {
    const response = await fetch(`${gateway.url}/v5/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': limitedKey },
      body: JSON.stringify({ model: 'local/tollgate-small', prompt: 'Hello', max_tokens: 3 }),
    });
    return { status: response.status, body: (await response.json()) as any, retryAfter: response.headers.get('retry-after') };
  };

  test('Redis away: 503 with retry-after, then recovery by itself', async () => {
    assert.equal((await call()).status, 200);
    await redis.stop();
    const down = await until(call, (r) => r.status === 503, 5000);
    assert.equal(down.status, 503);
    assert.equal(down.body.error.type, 'service_unavailable');
    assert.ok(down.retryAfter);
    assert.equal(gateway.child.exitCode, null, 'still running');
    await redis.start();
    const back = await until(call, (r) => r.status === 200, 10_000);
    assert.equal(back.status, 200);
  });

  test('PostgreSQL away: 503, never an unmetered success, then recovery by itself', async () => {
    assert.equal((await call()).status, 200);
    await postgres.stop();
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await call());
    assert.ok(
      results.every((r) => r.status === 503),
      JSON.stringify(results.map((r) => r.status)),
    );
    assert.ok(results.every((r) => r.body.error.type === 'service_unavailable'));
    const ready = await fetch(`${gateway.url}/ready`);
    assert.equal(ready.status, 503);
    // Every route that reads or writes the database says the same: 503, retry shortly.
    const routes: [string, string, Record<string, string>, unknown?][] = [
      ['GET', '/v5/usage', { 'x-api-key': limitedKey }],
      ['GET', '/v5/dashboard/series', { 'x-api-key': limitedKey }],
      ['GET', '/admin/usage', { 'x-api-key': adminKey }],
      ['GET', '/admin/accounts', { 'x-api-key': adminKey }],
      ['POST', '/admin/accounts', { 'x-api-key': adminKey, 'content-type': 'application/json' }, { name: 'during-the-outage' }],
    ];
    for (const [method, path, headers, body] of routes) {
      const response = await fetch(`${gateway.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const answer = (await response.json()) as any;
      assert.equal(response.status, 503, `${method} ${path}: ${JSON.stringify(answer)}`);
      assert.equal(answer.error.code, 'storage_unavailable', `${method} ${path}`);
      assert.equal(response.headers.get('retry-after'), '1', `${method} ${path}`);
    }
    assert.equal(gateway.child.exitCode, null, 'still running');
    await postgres.start();
    const back = await until(call, (r) => r.status === 200, 15_000);
    assert.equal(back.status, 200, JSON.stringify(back.body));
    const storage = createPostgresStorage(postgres.url);
    try {
      const record = await storage.getUsageRecord(back.body.id);
      assert.ok(record, 'the success after recovery is metered');
      const report = await storage.queryUsage({ accountId: limitedAccount });
      assert.equal(report.totals.requests >= 3, true);
    } finally {
      await storage.close();
    }
  });
});
