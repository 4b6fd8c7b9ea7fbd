/**
 * `serve --workers 2` without Redis: the primary holds the counters, so two workers enforce one
 * limit and one budget, never twice as much.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { generateKey } from '../src/auth/api-keys.js';
import { createSqliteStorage } from '../src/storage/sqlite/sqlite-storage.js';
import type { Storage } from '../src/storage/types.js';
import { spawnGateway, type GatewayProcess } from './support/gateway-process.js';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-cluster-'));
let gateway: GatewayProcess;
let storage: Storage;

before(async () => {
  const dbPath = join(dir, 'tollgate.db');
  gateway = await spawnGateway({ DATABASE_URL: `sqlite:${dbPath}`, TOLLGATE_POLICY_CACHE_MS: '0' }, ['serve', '--workers', '2']);
  storage = createSqliteStorage(dbPath);
});
after(async () => {
  gateway.child.kill('SIGTERM');
  await gateway.exited;
  await storage.close();
  rmSync(dir, { recursive: true, force: true });
});

async function account() {
  const created = await storage.createAccount(`c-${Math.random().toString(36).slice(2)}`);
  const key = generateKey();
  await storage.createKey({ id: key.id, accountId: created.id, name: null, prefix: key.prefix, secretHash: key.secretHash });
  return { accountId: created.id, key: key.key };
}

const call = (key: string, body: Record<string, unknown> = {}) =>
  fetch(`${gateway.url}/v5/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key, connection: 'close' },
    body: JSON.stringify({ model: 'local/tollgate-small', prompt: 'Hello there', max_tokens: 1, ...body }),
  }).then(async (response) => ({ status: response.status, body: (await response.json()) as any }));

describe('two workers, no Redis', () => {
  test('the workers really are two processes answering', async () => {
    assert.match(gateway.stdout(), /\(2 workers\)/);
  });

  test('rpm R lets exactly R through across the workers', async () => {
    const { accountId, key } = await account();
    await storage.setRateLimit({ accountId, keyId: null, rpm: 8, tpm: null });
    const results = await Promise.all(Array.from({ length: 24 }, () => call(key)));
    assert.equal(results.filter((r) => r.status === 200).length, 8);
    assert.equal(results.filter((r) => r.status === 429).length, 16);
  });

  test('a budget is overshot by 0 tokens under 50 concurrent requests', async () => {
    const { accountId, key } = await account();
    await storage.setBudget({ accountId, keyId: null, unit: 'tokens', limit: 250, period: 'total' });
    const results = await Promise.all(Array.from({ length: 50 }, () => call(key, { max_tokens: 10, temperature: 1 })));
    const ok = results.filter((r) => r.status === 200);
    assert.ok(ok.length > 0 && ok.length < 50);
    const used = await storage.sumUsage({ accountId, unit: 'tokens' });
    assert.ok(used <= 250, `used ${used}`);
    assert.equal(
      used,
      ok.reduce((sum, r) => sum + r.body.usage.total_tokens, 0),
    );
  });
});

describe('two workers, logs', () => {
  test("every request logs one whole JSON line on the primary's stdout, up to the last one before exit", async () => {
    const logDir = mkdtempSync(join(tmpdir(), 'tollgate-cluster-logs-'));
    const logged = await spawnGateway({ DATABASE_URL: `sqlite:${join(logDir, 'tollgate.db')}`, LOG_LEVEL: 'info' }, ['serve', '--workers', '2']);
    try {
      // The banner with the key follows the listening line; under load it may come a moment later.
      let key: string | undefined;
      for (let waited = 0; !key && waited < 10_000; waited += 50) {
        key = /^\s*(tg_\S+)\s*$/m.exec(logged.stdout())?.[1];
        if (!key) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.ok(key, `the bootstrap key is printed:\n${logged.stdout()}`);
      const requestCount = 300;
      const statuses: number[] = [];
      // 20 at a time, so both workers are writing at once.
      for (let batch = 0; batch < requestCount / 20; batch++) {
        const responses = await Promise.all(
          Array.from({ length: 20 }, () =>
            fetch(`${logged.url}/v5/completions`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-api-key': key },
              body: JSON.stringify({ model: 'local/tollgate-small', prompt: 'Hello there', max_tokens: 1 }),
            }).then(async (response) => {
              await response.arrayBuffer();
              return response.status;
            }),
          ),
        );
        statuses.push(...responses);
      }
      assert.deepEqual([...new Set(statuses)], [200]);
      logged.child.kill('SIGTERM');
      assert.equal(await logged.exited, 0);
      const jsonLines = logged
        .stdout()
        .split('\n')
        .filter((line) => line.startsWith('{'));
      const entries = jsonLines.map((line) => JSON.parse(line) as { msg?: string; requestId?: string });
      const completions = entries.filter((entry) => entry.msg === 'completion');
      assert.equal(completions.length, requestCount);
      assert.equal(new Set(completions.map((entry) => entry.requestId)).size, requestCount);
    } finally {
      if (logged.child.exitCode === null) logged.child.kill('SIGKILL');
      rmSync(logDir, { recursive: true, force: true });
    }
  });
});

describe('two workers, one SQLite checkpointer', () => {
  test('exactly one worker runs the checkpoints; when it dies its replacement takes over and the ledger keeps every record', async () => {
    const logDir = mkdtempSync(join(tmpdir(), 'tollgate-cluster-ckpt-'));
    const dbPath = join(logDir, 'tollgate.db');
    const logged = await spawnGateway({ DATABASE_URL: `sqlite:${dbPath}`, LOG_LEVEL: 'info' }, ['serve', '--workers', '2']);
    const checkpointers = () =>
      logged
        .stdout()
        .split('\n')
        .filter((line) => line.includes('"SQLite checkpoints run in this process"'))
        .map((line) => (JSON.parse(line) as { pid: number }).pid);
    const waitFor = async (condition: () => boolean, what: string) => {
      for (let waited = 0; !condition(); waited += 50) {
        if (waited > 15_000) throw new Error(`${what}:\n${logged.stdout()}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const ledger = createSqliteStorage(dbPath, { checkpoints: false });
    try {
      let key: string | undefined;
      await waitFor(() => (key = /^\s*(tg_\S+)\s*$/m.exec(logged.stdout())?.[1]) !== undefined, 'the bootstrap key is printed');
      const send = (count: number) =>
        Promise.all(
          Array.from({ length: count }, () =>
            fetch(`${logged.url}/v5/completions`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-api-key': key!, connection: 'close' },
              body: JSON.stringify({ model: 'local/tollgate-small', prompt: 'Hello there', max_tokens: 1 }),
            }).then(async (response) => {
              await response.arrayBuffer();
              return response.status;
            }),
          ),
        );
      assert.deepEqual([...new Set(await send(20))], [200]);
      // Both workers started (the primary announces only then), and only one of them took the role.
      // A worker's log lines reach the primary's stdout when its logger flushes: wait for the line.
      await waitFor(() => checkpointers().length > 0, 'a worker says it runs the checkpoints');
      const first = checkpointers();
      assert.equal(first.length, 1, `one checkpointing worker:\n${logged.stdout()}`);
      process.kill(first[0], 'SIGKILL');
      await waitFor(() => checkpointers().length === 2, 'the replacement worker takes the checkpoints over');
      const second = checkpointers()[1];
      assert.notEqual(second, first[0]);
      assert.deepEqual([...new Set(await send(20))], [200]);
      // Every answered request is in the ledger (committed before its answer), whichever worker wrote
      // it, the killed one included. (Its last log lines are not: they were still in its buffer.)
      const { totals } = await ledger.queryUsage({});
      assert.equal(totals.requests, 40);
      // Once the gateway has stopped (every logger flushed): still only those two ever held the role.
      logged.child.kill('SIGTERM');
      await logged.exited;
      assert.deepEqual(checkpointers(), [first[0], second]);
    } finally {
      await ledger.close();
      if (logged.child.exitCode === null) {
        logged.child.kill('SIGTERM');
        await logged.exited;
      }
      rmSync(logDir, { recursive: true, force: true });
    }
  });
});

describe('two workers, one /metrics', () => {
  test("a scrape on any worker counts every worker's requests, and the count never goes down, not even when a worker dies", async () => {
    const logDir = mkdtempSync(join(tmpdir(), 'tollgate-cluster-metrics-'));
    const logged = await spawnGateway({ DATABASE_URL: `sqlite:${join(logDir, 'tollgate.db')}`, LOG_LEVEL: 'info' }, ['serve', '--workers', '2']);
    const waitFor = async (condition: () => boolean, what: string) => {
      for (let waited = 0; !condition(); waited += 50) {
        if (waited > 15_000) throw new Error(`${what}:\n${logged.stdout()}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const checkpointers = () =>
      logged
        .stdout()
        .split('\n')
        .filter((line) => line.includes('"SQLite checkpoints run in this process"'))
        .map((line) => (JSON.parse(line) as { pid: number }).pid);
    // A new connection each time: the primary hands connections to the workers in turn.
    const send = (count: number) =>
      Promise.all(
        Array.from({ length: count }, () =>
          fetch(`${logged.url}/v5/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-api-key': key, connection: 'close' },
            body: JSON.stringify({ model: 'local/tollgate-small', prompt: 'Hello there', max_tokens: 1 }),
          }).then(async (response) => {
            await response.arrayBuffer();
            return response.status;
          }),
        ),
      );
    const scrape = async () => {
      const response = await fetch(`${logged.url}/metrics`, { headers: { connection: 'close' } });
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /text\/plain/);
      const text = await response.text();
      return Number(/^tollgate_requests_total\{vendor="local",model="local\/tollgate-small",status="200"\} (\d+)$/m.exec(text)?.[1] ?? 0);
    };
    let key = '';
    try {
      await waitFor(() => (key = /^\s*(tg_\S+)\s*$/m.exec(logged.stdout())?.[1] ?? '') !== '', 'the bootstrap key is printed');
      assert.deepEqual([...new Set(await send(20))], [200]);
      // Consecutive scrapes land on different workers; each answers for both.
      const counts = [await scrape(), await scrape(), await scrape(), await scrape()];
      assert.deepEqual(counts, [20, 20, 20, 20]);

      // The worker running the checkpoints dies; the one forked in its place takes the role over.
      await waitFor(() => checkpointers().length > 0, 'a worker says it runs the checkpoints');
      process.kill(checkpointers()[0], 'SIGKILL');
      await waitFor(() => checkpointers().length === 2, 'the replacement worker starts');
      assert.equal(await scrape(), 20, "the departed worker's requests are still counted");
      assert.deepEqual([...new Set(await send(10))], [200]);
      assert.deepEqual([await scrape(), await scrape()], [30, 30]);

      // A second death: the departed workers' counts are merged into one, still all there.
      process.kill(checkpointers()[1], 'SIGKILL');
      await waitFor(() => checkpointers().length === 3, 'the second replacement worker starts');
      assert.equal(await scrape(), 30);
      assert.deepEqual([...new Set(await send(6))], [200]);
      assert.deepEqual([await scrape(), await scrape()], [36, 36]);
    } finally {
      if (logged.child.exitCode === null) {
        logged.child.kill('SIGTERM');
        await logged.exited;
      }
      rmSync(logDir, { recursive: true, force: true });
    }
  });
});
