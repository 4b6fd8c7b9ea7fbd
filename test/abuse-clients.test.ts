/**
 * Abusive clients: slow headers (slowloris), a reader that never reads (backpressure, local model
 * and a fast upstream), thousands of connections opened and dropped, and a client that disconnects
 * at every point of a request. The server stays healthy and the ledger exact.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { generateKey } from '../src/auth/api-keys.js';
import { FaultUpstream } from './support/fault-upstream.js';
import { post, startTestGateway, type TestGateway } from './support/test-gateway.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const MODEL = 'local/tollgate-small';
const dir = mkdtempSync(join(tmpdir(), 'tollgate-abuse-'));
let gateway: TestGateway;
let upstream: FaultUpstream;
let port: number;

before(async () => {
  upstream = await FaultUpstream.start();
  const configPath = join(dir, 'tollgate.json');
  writeFileSync(configPath, JSON.stringify({ vendors: { openai: { idleTimeoutMs: 5_000, responseTimeoutMs: 5_000, maxRetries: 0 } } }));
  gateway = await startTestGateway({
    TOLLGATE_HEADERS_TIMEOUT_MS: '600',
    OPENAI_API_KEY: 'sk-abuse-1234567890',
    OPENAI_BASE_URL: upstream.url,
    TOLLGATE_CONFIG: configPath,
  });
  port = Number(new URL(gateway.url).port);
});
after(async () => {
  await gateway.stop();
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

function heapAfterGc(): number {
  for (let index = 0; index < 3; index++) gc();
  return process.memoryUsage().heapUsed;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function open(): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return socket;
}

function requestText(body: unknown, key = gateway.key): { head: string; body: string } {
  const text = JSON.stringify(body);
  return {
    head: `POST /v5/completions HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\nx-api-key: ${key}\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n`,
    body: text,
  };
}

async function ledgerCount(): Promise<number> {
  return (await gateway.server.storage.queryUsage({ accountId: gateway.accountId })).totals.requests;
}

/** Waits for the ledger to reach `expected` records, then makes sure it stays there. */
async function ledgerSettlesAt(expected: number): Promise<number> {
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline && (await ledgerCount()) < expected) await sleep(25);
  await sleep(150);
  return ledgerCount();
}

async function healthy(): Promise<void> {
  const response = await post(gateway, '/v5/completions', { model: MODEL, prompt: 'Still there?', max_tokens: 2 });
  assert.equal(response.status, 200, response.text);
}

const longStream = { model: MODEL, prompt: 'The state of the union is', max_tokens: 4000, stream: true, logit_bias: { '100257': -100 } };

describe('abusive clients', () => {
  test('slowloris: a connection that never finishes its headers is dropped within the bound', async () => {
    const socket = await open();
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk;
    });
    const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now())));
    const started = performance.now();
    socket.write('POST /v5/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    // One header byte every 100 ms, forever: each byte is progress, but the headers never end.
    const drip = setInterval(() => {
      if (!socket.destroyed) socket.write('x');
    }, 100);
    const closedAt = await Promise.race([closed, sleep(5_000).then(() => -1)]);
    clearInterval(drip);
    socket.destroy();
    assert.ok(closedAt > 0, 'the server never dropped the slow connection');
    assert.ok(closedAt - started < 3_000, `dropped after ${Math.round(closedAt - started)} ms`);
    if (answer) {
      assert.match(answer, /^HTTP\/1\.1 408/);
      const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
      assert.equal(body.error.code, 'request_timeout');
    }
    await healthy();
  });

  test('a client that never reads a long local stream: memory stays bounded, the socket buffer does not grow', async () => {
    const before = await ledgerCount();
    const baseline = heapAfterGc();
    const socket = await open();
    const request = requestText(longStream);
    socket.write(request.head + request.body);
    socket.pause();
    await sleep(1_500);
    const heldFirst = heapAfterGc() - baseline;
    await sleep(1_000);
    const heldLater = heapAfterGc() - baseline;
    assert.ok(heldLater < 16 * 1024 * 1024, `heap grew ${Math.round(heldLater / 1024)} KiB while the client did not read`);
    assert.ok(heldLater - heldFirst < 4 * 1024 * 1024, `heap kept growing: ${Math.round(heldFirst / 1024)} → ${Math.round(heldLater / 1024)} KiB`);
    socket.destroy();
    assert.equal(await ledgerSettlesAt(before + 1), before + 1);
    // ~1 MB of events may fit in the kernel's loopback buffers, so the stream may have finished unread;
    // either way it was metered once, and the gateway's heap did not hold it.
    const [record] = await gateway.server.storage.recentUsage({ accountId: gateway.accountId, limit: 1 });
    assert.ok(record.outcome === 'cancelled' || record.outcome === 'success', JSON.stringify(record));
    assert.ok(record.completionTokens > 0 && record.completionTokens <= 4000, `metered ${record.completionTokens} tokens`);
    await healthy();
  });

  test('a client that never reads a fast upstream stream: the upstream is paused, then cancelled', async () => {
    upstream.use('fast-forever');
    const before = await ledgerCount();
    const socket = await open();
    const request = requestText({ model: 'openai/gpt-3.5-turbo-instruct', prompt: 'Go', max_tokens: 1000, stream: true });
    socket.write(request.head + request.body);
    socket.pause();
    await sleep(1_000);
    const first = upstream.bytesWritten;
    await sleep(1_000);
    const later = upstream.bytesWritten;
    assert.ok(first > 0, 'the upstream never started');
    assert.ok(later - first < 1024 * 1024, `the upstream kept pushing while the client did not read: ${first} → ${later} bytes`);
    assert.ok(later < 32 * 1024 * 1024, `${later} bytes were taken from the upstream for a client that read none`);
    socket.destroy();
    assert.equal(await ledgerSettlesAt(before + 1), before + 1);
    const deadline = Date.now() + 2_000;
    while (upstream.busySockets > 0 && Date.now() < deadline) await sleep(20);
    assert.equal(upstream.busySockets, 0, 'the upstream call outlived the client');
    upstream.use('ok');
  });

  for (const stream of [false, true]) {
    test(`a client that leaves while its request waits for admission (${stream ? 'streamed' : 'not streamed'}): the upstream call ends with it, recorded once as cancelled`, async (t) => {
      upstream.use('hang');
      // A fresh account: its budgets are not cached, so admission reads them from storage, slowly.
      const { storage } = gateway.server;
      const account = await storage.createAccount(`admission-${stream}-${Math.random().toString(36).slice(2)}`);
      const generated = generateKey();
      await storage.createKey({ id: generated.id, accountId: account.id, name: null, prefix: generated.prefix, secretHash: generated.secretHash });
      const getBudgets = storage.getBudgets.bind(storage);
      t.mock.method(storage, 'getBudgets', async (...args: Parameters<typeof getBudgets>) => {
        await sleep(300);
        return getBudgets(...args);
      });
      const socket = await open();
      socket.on('error', () => undefined);
      const request = requestText({ model: 'openai/gpt-3.5-turbo-instruct', prompt: 'Go', max_tokens: 10, stream }, generated.key);
      socket.write(request.head + request.body);
      await sleep(100);
      socket.destroy();
      // The upstream never answers: only the client's leaving can end the run before its 5 s limit.
      let records = await storage.recentUsage({ accountId: account.id, limit: 5 });
      for (let tries = 0; records.length === 0 && tries < 100; tries++) {
        await sleep(20);
        records = await storage.recentUsage({ accountId: account.id, limit: 5 });
      }
      assert.deepEqual(
        records.map((record) => [record.outcome, record.status]),
        [['cancelled', 499]],
      );
      await sleep(100);
      assert.equal(upstream.busySockets, 0, 'the upstream call outlived the client');
      upstream.use('ok');
    });
  }

  test('2,000 connections opened and dropped: the server still answers', async () => {
    const before = await ledgerCount();
    for (let batch = 0; batch < 10; batch++) {
      await Promise.all(
        Array.from({ length: 200 }, async (_, index) => {
          const socket = await open();
          if (index % 3 === 1) socket.write('POST /v5/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n');
          if (index % 3 === 2) socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
          socket.destroy();
        }),
      );
    }
    await healthy();
    const health = await fetch(`${gateway.url}/health`);
    assert.equal(health.status, 200);
    // None of them was an authenticated completion, so none was metered; the healthy() call was.
    assert.equal(await ledgerSettlesAt(before + 1), before + 1);
  });

  describe('a client that disconnects at every point', () => {
    const points: { name: string; authenticated: boolean; run(socket: Socket): Promise<void> }[] = [
      {
        name: 'before the headers complete',
        authenticated: false,
        async run(socket) {
          socket.write(requestText(longStream).head.slice(0, 60));
          await sleep(50);
        },
      },
      {
        name: 'mid-body',
        authenticated: true,
        async run(socket) {
          const request = requestText(longStream);
          socket.write(request.head + request.body.slice(0, 20));
          await sleep(100);
        },
      },
      {
        name: 'right after sending (streamed)',
        authenticated: true,
        async run(socket) {
          const request = requestText(longStream);
          socket.write(request.head + request.body);
        },
      },
      {
        name: 'right after sending (not streamed)',
        authenticated: true,
        async run(socket) {
          const request = requestText({ ...longStream, stream: false, max_tokens: 2000 });
          socket.write(request.head + request.body);
          await sleep(30);
        },
      },
      {
        name: 'after the first byte',
        authenticated: true,
        async run(socket) {
          const request = requestText(longStream);
          socket.write(request.head + request.body);
          await new Promise<void>((resolve) => socket.once('data', () => resolve()));
        },
      },
      {
        name: 'mid-stream',
        authenticated: true,
        async run(socket) {
          const request = requestText(longStream);
          socket.write(request.head + request.body);
          let seen = 0;
          await new Promise<void>((resolve) =>
            socket.on('data', (chunk: Buffer) => {
              seen += chunk.toString().split('data: ').length - 1;
              if (seen >= 20) resolve();
            }),
          );
        },
      },
      {
        name: 'mid-stream from a vendor',
        authenticated: true,
        async run(socket) {
          upstream.use('fast-forever');
          const request = requestText({ model: 'openai/gpt-3.5-turbo-instruct', prompt: 'Go', max_tokens: 1000, stream: true });
          socket.write(request.head + request.body);
          await new Promise<void>((resolve) => socket.once('data', () => resolve()));
          await sleep(50);
        },
      },
    ];
    for (const point of points) {
      test(`${point.name}: ${point.authenticated ? 'exactly one' : 'no'} ledger record, server healthy`, async () => {
        const before = await ledgerCount();
        const socket = await open();
        socket.on('error', () => undefined);
        await point.run(socket);
        socket.destroy();
        const expected = before + (point.authenticated ? 1 : 0);
        assert.equal(await ledgerSettlesAt(expected), expected);
        if (point.authenticated) {
          const [record] = await gateway.server.storage.recentUsage({ accountId: gateway.accountId, limit: 1 });
          // On a loaded machine a short request can complete before its client's close is seen: then it is a success.
          assert.ok(['cancelled', 'invalid_request', 'success'].includes(record.outcome), JSON.stringify(record));
        }
        upstream.use('ok');
        await healthy();
        assert.equal(await ledgerSettlesAt(expected + 1), expected + 1);
      });
    }
  });
});
