/**
 * `Idempotency-Key` on POST /v5/completions, end to end through the real server with a mock
 * vendor: replays byte for byte (JSON and stream) with no second upstream call and no second
 * ledger record, refusals (another body, a key in use, a bad key), release on failure and cancel,
 * stale claims, expiry, accounts apart, storage failures; and the purge's pace on a real SQLite.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { generateKey } from '../src/auth/api-keys.js';
import { storageUnavailable } from '../src/errors/gateway-error.js';
import { createLogger } from '../src/observability/logger.js';
import { createSqliteStorage } from '../src/storage/sqlite/sqlite-storage.js';
import { IdempotencyKeys } from '../src/usage/idempotency-keys.js';
import { requestFingerprint } from '../src/usage/request-fingerprint.js';
import { MockUpstream } from './support/mock-upstream.js';
import { post, startTestGateway, type TestGateway } from './support/test-gateway.js';
import { openaiCompletions } from './support/vendor-wire.js';

const MODEL = 'openai/gpt-3.5-turbo-instruct';
const ROUTE = '/v5/completions';
const billed = { prompt: 3, completion: 2 };
let gateway: TestGateway;
let upstream: MockUpstream;
const dir = mkdtempSync(join(tmpdir(), 'tollgate-idempotency-'));

before(async () => {
  upstream = await MockUpstream.start();
  const configPath = join(dir, 'tollgate.json');
  writeFileSync(configPath, JSON.stringify({ vendors: { openai: { connectTimeoutMs: 1000, idleTimeoutMs: 2000, maxRetries: 0 } } }));
  gateway = await startTestGateway({ OPENAI_API_KEY: 'sk-idempotency-123456', OPENAI_BASE_URL: upstream.url, TOLLGATE_CONFIG: configPath });
});
after(async () => {
  await gateway.stop();
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => upstream.reset());

/** A new account with a key of its own, so each test counts only its own ledger records. */
async function freshCaller() {
  const account = await gateway.server.storage.createAccount(`idem-${Math.random().toString(36).slice(2)}`);
  const generated = generateKey();
  await gateway.server.storage.createKey({ id: generated.id, accountId: account.id, name: null, prefix: generated.prefix, secretHash: generated.secretHash });
  return { accountId: account.id, key: generated.key };
}

const uniqueKey = () => `key-${Math.random().toString(36).slice(2)}`;

function send(caller: { key: string }, body: unknown, idempotencyKey?: string, options: { timeoutMs?: number } = {}) {
  const headers: Record<string, string> = { 'x-api-key': caller.key };
  if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
  return post(gateway, ROUTE, body, headers, { timeoutMs: options.timeoutMs ?? 10_000 });
}

async function ledger(accountId: string) {
  return gateway.server.storage.recentUsage({ accountId, limit: 100 });
}

const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString();

describe('a repeat of a completed key', () => {
  test('JSON: replayed byte for byte, marked, without an upstream call or a ledger record, with one log line', async () => {
    const caller = await freshCaller();
    const key = uniqueKey();
    upstream.always(openaiCompletions.json({ texts: ['Hello there'], usage: billed }));
    const first = await send(caller, { model: MODEL, prompt: 'Hi', max_tokens: 5 }, key);
    assert.equal(first.status, 200, first.text);
    assert.equal(first.headers.get('idempotent-replayed'), null);
    // The same request, its keys in another order and spaced differently.
    const again = await send(caller, `{ "max_tokens": 5,  "prompt": "Hi", "model": "${MODEL}" }`, key);
    assert.equal(again.status, 200, again.text);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.text, first.text);
    assert.equal(again.headers.get('content-type'), first.headers.get('content-type'));
    assert.notEqual(again.headers.get('x-request-id'), first.headers.get('x-request-id'));
    assert.equal(upstream.requests.length, 1);
    const records = await ledger(caller.accountId);
    assert.deepEqual(
      records.map((record) => record.requestId),
      [first.body.id],
    );
    const replays = gateway.logs.filter((line) => line.msg === 'idempotent replay' && line.completionId === first.body.id);
    assert.equal(replays.length, 1);
    assert.equal(replays[0].requestId, again.headers.get('x-request-id'));
  });

  test('stream: the whole event text, [DONE] included, replayed as text/event-stream', async () => {
    const caller = await freshCaller();
    const key = uniqueKey();
    upstream.always(openaiCompletions.stream({ texts: [['Hel', 'lo']], usage: billed }));
    const body = { model: MODEL, prompt: 'Hi', max_tokens: 5, stream: true, stream_options: { include_usage: true } };
    const first = await send(caller, body, key);
    assert.equal(first.status, 200, first.text);
    assert.ok(first.text.endsWith('data: [DONE]\n\n'), first.text);
    const again = await send(caller, body, key);
    assert.equal(again.status, 200);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.match(again.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.equal(again.text, first.text);
    assert.equal(upstream.requests.length, 1);
    assert.equal((await ledger(caller.accountId)).length, 1);
  });

  test('another body under the same key is a 422 idempotency_key_reused', async () => {
    const caller = await freshCaller();
    const key = uniqueKey();
    upstream.always(openaiCompletions.json({ texts: ['Hello'], usage: billed }));
    assert.equal((await send(caller, { model: MODEL, prompt: 'Hi', max_tokens: 5 }, key)).status, 200);
    const other = await send(caller, { model: MODEL, prompt: 'Hi', max_tokens: 6 }, key);
    assert.equal(other.status, 422, other.text);
    assert.deepEqual(Object.keys(other.body.error).sort(), ['code', 'message', 'param', 'type']);
    assert.equal(other.body.error.type, 'invalid_request_error');
    assert.equal(other.body.error.code, 'idempotency_key_reused');
    assert.equal(other.headers.get('x-should-retry'), 'false');
    assert.equal(upstream.requests.length, 1);
  });

  test("another account's same key is its own", async () => {
    const [one, two] = [await freshCaller(), await freshCaller()];
    const key = uniqueKey();
    upstream.always({ answer: (recorded) => openaiCompletions.json({ texts: [`answer ${upstream.requests.indexOf(recorded)}`], usage: billed }) });
    const body = { model: MODEL, prompt: 'Hi', max_tokens: 5 };
    const first = await send(one, body, key);
    const second = await send(two, body, key);
    assert.equal(second.headers.get('idempotent-replayed'), null);
    assert.notEqual(second.body.id, first.body.id);
    assert.equal(upstream.requests.length, 2);
    assert.equal((await send(one, body, key)).text, first.text);
    assert.equal((await send(two, body, key)).text, second.text);
    assert.equal(upstream.requests.length, 2);
  });
});

describe('a key in use, failed or abandoned', () => {
  test('while the first request runs, the same key is a 409 idempotency_key_in_use with retry-after', async () => {
    const caller = await freshCaller();
    const key = uniqueKey();
    // The vendor answers the first request only once the second has had its answer, however slow the machine.
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    upstream.always((_request, response) => {
      void released.then(() => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(openaiCompletions.body({ texts: ['slow'], usage: billed })));
      });
    });
    const body = { model: MODEL, prompt: 'Hi', max_tokens: 5 };
    const first = send(caller, body, key);
    while (upstream.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    const during = await send(caller, body, key).finally(release);
    assert.equal(during.status, 409, during.text);
    assert.equal(during.body.error.code, 'idempotency_key_in_use');
    assert.equal(during.headers.get('retry-after'), '1');
    assert.equal(during.headers.get('x-should-retry'), 'true');
    const done = await first;
    assert.equal(done.status, 200);
    assert.equal((await send(caller, body, key)).text, done.text);
    assert.equal(upstream.requests.length, 1);
  });

  test('a failed first request releases the key: the retry runs, and is then replayed', async () => {
    const caller = await freshCaller();
    const key = uniqueKey();
    const body = { model: MODEL, prompt: 'Hi', max_tokens: 5 };
    upstream.reply(openaiCompletions.error(500, 'upstream broke'), openaiCompletions.json({ texts: ['fine'], usage: billed }));
    const failed = await send(caller, body, key);
    assert.equal(failed.status, 502, failed.text);
    const retried = await send(caller, body, key);
    assert.equal(retried.status, 200, retried.text);
    assert.equal(retried.headers.get('idempotent-replayed'), null);
    assert.equal((await send(caller, body, key)).headers.get('idempotent-replayed'), 'true');
    assert.equal(upstream.requests.length, 2);
  });

  test('a stream that fails after output releases the key', async () => {
    const caller = await freshCaller();
    const key = uniqueKey();
    const body = { model: MODEL, prompt: 'Hi', max_tokens: 5, stream: true };
    upstream.reply(openaiCompletions.breakAfterOutput('Hel', billed), openaiCompletions.stream({ texts: [['Hel', 'lo']], usage: billed }));
    const broken = await send(caller, body, key);
    assert.equal(broken.status, 200);
    assert.match(broken.text, /"error"/);
    const retried = await send(caller, body, key);
    assert.equal(retried.headers.get('idempotent-replayed'), null);
    assert.ok(retried.text.endsWith('data: [DONE]\n\n'));
    const replayed = await send(caller, body, key);
    assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
    assert.equal(replayed.text, retried.text);
    assert.equal(upstream.requests.length, 2);
  });

  test('a client that leaves mid-stream releases the key', async () => {
    const caller = await freshCaller();
    const key = uniqueKey();
    const body = { model: MODEL, prompt: 'Hi', max_tokens: 5, stream: true };
    upstream.reply(openaiCompletions.stream({ texts: [['a', 'b', 'c', 'd', 'e']], usage: billed }, { delayMs: 300 }));
    upstream.always(openaiCompletions.stream({ texts: [['ok']], usage: billed }));
    const leaving = new AbortController();
    const response = await fetch(`${gateway.url}${ROUTE}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': caller.key, 'idempotency-key': key },
      body: JSON.stringify(body),
      signal: leaving.signal,
    });
    const reader = response.body!.getReader();
    await reader.read();
    leaving.abort();
    await reader.cancel().catch(() => {});
    let retried = await send(caller, body, key);
    for (let attempt = 0; retried.status === 409 && attempt < 40; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      retried = await send(caller, body, key);
    }
    assert.equal(retried.status, 200, retried.text);
    assert.equal(retried.headers.get('idempotent-replayed'), null);
    assert.ok(retried.text.endsWith('data: [DONE]\n\n'));
    assert.equal((await send(caller, body, key)).headers.get('idempotent-replayed'), 'true');
  });

  test('a client that leaves while its key is being claimed cancels the run: nothing billed in full, no empty stream stored', async (context) => {
    const caller = await freshCaller();
    const key = uniqueKey();
    const body = { model: MODEL, prompt: 'Hi', max_tokens: 5, stream: true };
    const storage = gateway.server.storage;
    const claimKey = storage.claimIdempotencyKey.bind(storage);
    let claimed!: () => void;
    const claimDone = new Promise<void>((resolve) => {
      claimed = resolve;
    });
    let claiming!: () => void;
    const claimStarted = new Promise<void>((resolve) => {
      claiming = resolve;
    });
    // A slow database: the claim returns only after the client has gone.
    context.mock.method(storage, 'claimIdempotencyKey', async (claim: Parameters<typeof storage.claimIdempotencyKey>[0]) => {
      claiming();
      await new Promise((resolve) => setTimeout(resolve, 400));
      try {
        return await claimKey(claim);
      } finally {
        claimed();
      }
    });
    upstream.always(openaiCompletions.stream({ texts: [['a', 'b', 'c', 'd', 'e']], usage: billed }, { delayMs: 100 }));
    const leaving = new AbortController();
    const sent = fetch(`${gateway.url}${ROUTE}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': caller.key, 'idempotency-key': key },
      body: JSON.stringify(body),
      signal: leaving.signal,
    }).catch(() => null);
    // The client leaves once its request is waiting on the claim (a fixed delay could fire before the request arrived).
    void claimStarted.then(() => leaving.abort());
    await sent;
    await claimDone;
    context.mock.restoreAll();
    let records = await ledger(caller.accountId);
    for (let attempt = 0; records.length === 0 && attempt < 60; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      records = await ledger(caller.accountId);
    }
    assert.equal(records.length, 1);
    assert.equal(records[0].outcome, 'cancelled');
    let retried = await send(caller, body, key);
    for (let attempt = 0; retried.status === 409 && attempt < 40; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      retried = await send(caller, body, key);
    }
    assert.equal(retried.status, 200, retried.text);
    assert.equal(retried.headers.get('idempotent-replayed'), null, `an abandoned run was stored for replay: ${JSON.stringify(retried.text)}`);
  });

  test("another process's live claim is a 409; once its lease ended (the process crashed) the key is taken over", async () => {
    const caller = await freshCaller();
    const body = { model: MODEL, prompt: 'Hi', max_tokens: 5 };
    const storage = gateway.server.storage;
    const claim = { accountId: caller.accountId, route: ROUTE, fingerprint: requestFingerprint(body), token: 'crashed' };
    const live = uniqueKey();
    await storage.claimIdempotencyKey({ ...claim, key: live, now: hoursAgo(0), expiresAt: new Date(Date.now() + 60_000).toISOString() });
    upstream.always(openaiCompletions.json({ texts: ['Hello'], usage: billed }));
    const busy = await send(caller, body, live);
    assert.equal(busy.status, 409, busy.text);
    assert.equal(busy.body.error.code, 'idempotency_key_in_use');
    const stale = uniqueKey();
    await storage.claimIdempotencyKey({ ...claim, key: stale, now: hoursAgo(0.2), expiresAt: hoursAgo(0.1) });
    const taken = await send(caller, body, stale);
    assert.equal(taken.status, 200, taken.text);
    assert.equal(taken.headers.get('idempotent-replayed'), null);
    assert.equal((await send(caller, body, stale)).headers.get('idempotent-replayed'), 'true');
    assert.equal(upstream.requests.length, 1);
  });
});

describe('expiry, bad keys, storage', () => {
  test('an answer stored more than 24 h ago is absent: the key runs again, whatever the body', async () => {
    const caller = await freshCaller();
    const key = uniqueKey();
    const scope = { accountId: caller.accountId, route: ROUTE, key, token: 'old' };
    const storage = gateway.server.storage;
    await storage.claimIdempotencyKey({ ...scope, fingerprint: 'old body', now: hoursAgo(25), expiresAt: hoursAgo(24.9) });
    const response = { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body: Buffer.from('{"old":true}') };
    await storage.completeIdempotencyKey({ ...scope, completionId: 'cmpl-old', response, expiresAt: hoursAgo(1) });
    upstream.always(openaiCompletions.json({ texts: ['new'], usage: billed }));
    const fresh = await send(caller, { model: MODEL, prompt: 'Hi', max_tokens: 5 }, key);
    assert.equal(fresh.status, 200, fresh.text);
    assert.equal(fresh.headers.get('idempotent-replayed'), null);
    assert.equal(fresh.body.choices[0].text, 'new');
    const replayed = await send(caller, { model: MODEL, prompt: 'Hi', max_tokens: 5 }, key);
    assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
    assert.equal(replayed.text, fresh.text);
    assert.equal(upstream.requests.length, 1);
  });

  test('a key that is empty, too long or not printable ASCII is a 400 invalid_idempotency_key; 255 characters are fine', async () => {
    const caller = await freshCaller();
    upstream.always(openaiCompletions.json({ texts: ['Hello'], usage: billed }));
    const body = { model: MODEL, prompt: 'Hi', max_tokens: 5 };
    for (const bad of ['', 'x'.repeat(256), 'caf\u00e9', 'a\tb']) {
      const refused = await send(caller, body, bad);
      assert.equal(refused.status, 400, `${JSON.stringify(bad)}: ${refused.text}`);
      assert.deepEqual(refused.body.error, {
        message: 'The Idempotency-Key header must be 1 to 255 printable ASCII characters.',
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_idempotency_key',
      });
    }
    assert.equal(upstream.requests.length, 0);
    const longest = `a ${'k'.repeat(253)}`;
    assert.equal((await send(caller, body, longest)).status, 200);
    assert.equal((await send(caller, body, longest)).headers.get('idempotent-replayed'), 'true');
  });

  test('without the header nothing is claimed or stored', async (context) => {
    const caller = await freshCaller();
    const claim = context.mock.method(gateway.server.storage, 'claimIdempotencyKey');
    upstream.always(openaiCompletions.json({ texts: ['Hello'], usage: billed }));
    const body = { model: MODEL, prompt: 'Hi', max_tokens: 5 };
    const first = await send(caller, body);
    const second = await send(caller, body);
    assert.equal(second.headers.get('idempotent-replayed'), null);
    assert.notEqual(first.body.id, second.body.id);
    assert.equal(claim.mock.callCount(), 0);
    assert.equal(upstream.requests.length, 2);
  });

  test('storage down at the claim is a 503 storage_unavailable, before any upstream call', async (context) => {
    const caller = await freshCaller();
    context.mock.method(gateway.server.storage, 'claimIdempotencyKey', async () => {
      throw storageUnavailable(new Error('database gone'));
    });
    const refused = await send(caller, { model: MODEL, prompt: 'Hi', max_tokens: 5 }, uniqueKey());
    assert.equal(refused.status, 503, refused.text);
    assert.equal(refused.body.error.code, 'storage_unavailable');
    assert.equal(upstream.requests.length, 0);
  });

  test('an answer that cannot be stored still reaches the client; the error is logged and the key released', async (context) => {
    const caller = await freshCaller();
    const key = uniqueKey();
    const complete = context.mock.method(gateway.server.storage, 'completeIdempotencyKey', async () => {
      throw storageUnavailable(new Error('database gone'));
    });
    upstream.always(openaiCompletions.json({ texts: ['Hello'], usage: billed }));
    const body = { model: MODEL, prompt: 'Hi', max_tokens: 5 };
    const answered = await send(caller, body, key);
    assert.equal(answered.status, 200, answered.text);
    assert.equal(complete.mock.callCount(), 1);
    assert.ok(gateway.logs.some((line) => line.msg === 'idempotent response not stored' && line.completionId === answered.body.id));
    complete.mock.restore();
    const retried = await send(caller, body, key);
    assert.equal(retried.status, 200);
    assert.equal(retried.headers.get('idempotent-replayed'), null);
    assert.equal(upstream.requests.length, 2);
  });
});

describe('the rules on a real SQLite', () => {
  test('a running claim renews its lease, so a long request keeps its key', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'tollgate-idempotency-lease-'));
    const storage = createSqliteStorage(join(directory, 'tollgate.db'), { checkpoints: false });
    try {
      await storage.migrate();
      const keys = new IdempotencyKeys(storage, createLogger('silent'), { claimLeaseMs: 80 });
      const scope = { accountId: 'acct_a', route: ROUTE, key: 'long' };
      const running = await keys.claim(scope, { prompt: 'Hi' });
      assert.equal(running.kind, 'claimed');
      await new Promise((resolve) => setTimeout(resolve, 300));
      await assert.rejects(keys.claim(scope, { prompt: 'Hi' }), { status: 409, code: 'idempotency_key_in_use' });
      if (running.kind === 'claimed') await running.release();
      assert.equal((await keys.claim(scope, { prompt: 'Hi' })).kind, 'claimed');
    } finally {
      await storage.close();
      rmSync(directory, { recursive: true, force: true });
    }
  });

  test('the purge: expired entries go in bounded batches, at once again while a batch came back full', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'tollgate-idempotency-purge-'));
    const storage = createSqliteStorage(join(directory, 'tollgate.db'), { checkpoints: false });
    try {
      await storage.migrate();
      const purge = storage.purgeIdempotencyKeys.bind(storage);
      const batches: number[] = [];
      storage.purgeIdempotencyKeys = async (query) => {
        const deleted = await purge(query);
        batches.push(deleted);
        return deleted;
      };
      for (let index = 0; index < 5; index++) {
        await storage.claimIdempotencyKey({
          accountId: 'acct_a',
          route: ROUTE,
          key: `expired-${index}`,
          token: 't',
          fingerprint: 'f',
          now: hoursAgo(30),
          expiresAt: hoursAgo(25),
        });
      }
      const keys = new IdempotencyKeys(storage, createLogger('silent'), { purgeBatch: 2, purgeIntervalMs: 3_600_000 });
      const settle = () => new Promise((resolve) => setTimeout(resolve, 20));
      for (let index = 0; index < 6; index++) {
        const claimed = await keys.claim({ accountId: 'acct_b', route: ROUTE, key: `live-${index}` }, { n: index });
        assert.equal(claimed.kind, 'claimed');
        if (claimed.kind === 'claimed') await claimed.release();
        await settle();
      }
      // 2 + 2 + 1 while a full batch says more may wait; then nothing until the interval passes.
      assert.deepEqual(batches, [2, 2, 1]);
    } finally {
      await storage.close();
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
