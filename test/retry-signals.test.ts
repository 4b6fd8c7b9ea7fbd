/**
 * `x-should-retry` and `retry-after` tell a client whether the same request can succeed later
 * (SDKs retry 5xx on their own unless told not to, and every retry is billed). One row per cause,
 * through the real server with a mock vendor.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { generateKey } from '../src/auth/api-keys.js';
import { storageUnavailable } from '../src/errors/gateway-error.js';
import { MockUpstream, type Reply } from './support/mock-upstream.js';
import { post, startTestGateway, type JsonResponse, type TestGateway } from './support/test-gateway.js';
import { fixture } from './support/vendor-fixtures.js';
import { openaiCompletions } from './support/vendor-wire.js';

const LOCAL = 'local/tollgate-small';
const VENDOR = 'openai/gpt-3.5-turbo-instruct';
let gateway: TestGateway;
let upstream: MockUpstream;
const dir = mkdtempSync(join(tmpdir(), 'tollgate-retry-'));

before(async () => {
  upstream = await MockUpstream.start();
  const configPath = join(dir, 'tollgate.json');
  // No retries inside the gateway and a short answer deadline: each row sees the vendor's first answer.
  writeFileSync(configPath, JSON.stringify({ vendors: { openai: { connectTimeoutMs: 1000, idleTimeoutMs: 1000, responseTimeoutMs: 400, maxRetries: 0 } } }));
  gateway = await startTestGateway({
    OPENAI_API_KEY: 'sk-retry-signals-123456',
    OPENAI_BASE_URL: upstream.url,
    TOLLGATE_CONFIG: configPath,
    TOLLGATE_POLICY_CACHE_MS: '0',
  });
});
after(async () => {
  await gateway.stop();
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => upstream.reset());

async function freshKey(name: string) {
  const account = await gateway.server.storage.createAccount(`${name}-${Math.random().toString(36).slice(2)}`);
  const generated = generateKey();
  await gateway.server.storage.createKey({ id: generated.id, accountId: account.id, name: null, prefix: generated.prefix, secretHash: generated.secretHash });
  return { accountId: account.id, key: generated.key };
}

/** The answer says whether to retry, and when (null: no retry-after header). */
function assertSignal(response: JsonResponse, status: number, shouldRetry: boolean, retryAfter: string | null | RegExp): void {
  assert.equal(response.status, status, response.text);
  assert.deepEqual(Object.keys(response.body.error).sort(), ['code', 'message', 'param', 'type']);
  assert.equal(response.headers.get('x-should-retry'), String(shouldRetry), response.text);
  if (retryAfter instanceof RegExp) assert.match(response.headers.get('retry-after') ?? '', retryAfter);
  else assert.equal(response.headers.get('retry-after'), retryAfter);
}

describe('vendor answers before any output', () => {
  const rows: { name: string; reply: Reply; status: number; retry: boolean; retryAfter: string | null }[] = [
    {
      name: "the vendor refuses the gateway's credentials (401)",
      reply: openaiCompletions.error(401, 'Incorrect API key provided'),
      status: 502,
      retry: false,
      retryAfter: null,
    },
    {
      name: 'the vendor forbids the gateway (403)',
      reply: openaiCompletions.error(403, 'Forbidden'),
      status: 502,
      retry: false,
      retryAfter: null,
    },
    {
      name: 'the vendor rejects the request (400)',
      reply: openaiCompletions.error(400, 'bad request'),
      status: 400,
      retry: false,
      retryAfter: null,
    },
    {
      name: 'the vendor has no such model (404)',
      reply: openaiCompletions.error(404, 'no such model'),
      status: 404,
      retry: false,
      retryAfter: null,
    },
    {
      name: 'the vendor cannot process the request (422)',
      reply: openaiCompletions.error(422, 'unprocessable'),
      status: 400,
      retry: false,
      retryAfter: null,
    },
    {
      name: 'the vendor rate limits the gateway (429)',
      reply: openaiCompletions.error(429, 'slow down', { 'retry-after': '7' }),
      status: 429,
      retry: true,
      retryAfter: '7',
    },
    {
      name: "the gateway's account with the vendor is out of credit (429 insufficient_quota)",
      reply: fixture('openai/error-insufficient-quota.json', { status: 429 }),
      status: 502,
      retry: false,
      retryAfter: null,
    },
    {
      name: 'the vendor wants payment (402)',
      reply: openaiCompletions.error(402, 'Insufficient Balance'),
      status: 502,
      retry: false,
      retryAfter: null,
    },
    { name: 'the vendor fails (500)', reply: openaiCompletions.error(500, 'boom'), status: 502, retry: true, retryAfter: null },
    { name: 'the vendor timed out itself (504)', reply: openaiCompletions.error(504, 'timed out'), status: 504, retry: true, retryAfter: null },
    {
      name: 'the vendor is overloaded and says when to come back (503)',
      reply: openaiCompletions.error(503, 'overloaded', { 'retry-after': '3' }),
      status: 502,
      retry: true,
      retryAfter: '3',
    },
    { name: 'the vendor never answers (timeout)', reply: { hang: true }, status: 504, retry: true, retryAfter: null },
  ];
  for (const row of rows) {
    test(`${row.name} → ${row.status}, x-should-retry ${row.retry}`, async () => {
      upstream.reply(row.reply);
      const response = await post(gateway, '/v5/completions', { model: VENDOR, prompt: 'Hi', max_tokens: 2 }, {}, { timeoutMs: 10_000 });
      assertSignal(response, row.status, row.retry, row.retryAfter);
      assert.equal(upstream.requests.length, 1, 'the gateway itself did not retry');
    });
  }
});

/** Uses all 30 of its tokens (the end-of-text token is barred), so the budget is used up as planned. */
const fullLength = { model: LOCAL, prompt: 'Hi', max_tokens: 30, logit_bias: { '100257': -100 } };

describe("the gateway's own refusals", () => {
  test('4xx validation errors are final', async () => {
    assertSignal(await post(gateway, '/v5/completions', { model: LOCAL, prompt: 'Hi', temperature: 9 }), 400, false, null);
    assertSignal(await post(gateway, '/v5/completions', '{"model":'), 400, false, null);
    assertSignal(await post(gateway, '/v5/completions', 'model=x', { 'content-type': 'text/plain' }), 415, false, null);
    assertSignal(await post(gateway, '/v5/completions', { model: 'nosuch/x', prompt: 'Hi' }), 404, false, null);
    assertSignal(await post(gateway, '/v5/completions', { model: LOCAL, prompt: 'Hi' }, { 'x-api-key': 'tg_nope' }), 401, false, null);
  });

  test('a request larger than the tokens-per-minute limit is final', async () => {
    const { accountId, key } = await freshKey('tpm');
    await gateway.server.storage.setRateLimit({ accountId, keyId: null, rpm: null, tpm: 10 });
    assertSignal(await post(gateway, '/v5/completions', { model: LOCAL, prompt: 'Hi', max_tokens: 50 }, { 'x-api-key': key }), 429, false, null);
  });

  test('a rate limit that refills says when to retry', async () => {
    const { accountId, key } = await freshKey('rpm');
    await gateway.server.storage.setRateLimit({ accountId, keyId: null, rpm: 1, tpm: null });
    assert.equal((await post(gateway, '/v5/completions', { model: LOCAL, prompt: 'Hi', max_tokens: 1 }, { 'x-api-key': key })).status, 200);
    assertSignal(await post(gateway, '/v5/completions', { model: LOCAL, prompt: 'Hi', max_tokens: 1 }, { 'x-api-key': key }), 429, true, /^[1-9][0-9]?$/);
  });

  test('a request larger than its whole budget is final', async () => {
    const { accountId, key } = await freshKey('tiny-day');
    await gateway.server.storage.setBudget({ accountId, keyId: null, unit: 'tokens', limit: 10, period: 'day' });
    const response = await post(gateway, '/v5/completions', { model: LOCAL, prompt: 'Hi', max_tokens: 50 }, { 'x-api-key': key });
    assertSignal(response, 429, false, null);
    assert.equal(response.body.error.code, 'insufficient_quota');
    assert.match(response.body.error.message, /whole budget of 10 tokens/);
  });

  test('a spent total budget is final', async () => {
    const { accountId, key } = await freshKey('total');
    await gateway.server.storage.setBudget({ accountId, keyId: null, unit: 'tokens', limit: 40, period: 'total' });
    assert.equal((await post(gateway, '/v5/completions', fullLength, { 'x-api-key': key })).status, 200);
    const response = await post(gateway, '/v5/completions', { model: LOCAL, prompt: 'Hi', max_tokens: 30 }, { 'x-api-key': key });
    assertSignal(response, 429, false, null);
    assert.match(response.body.error.message, /never resets/);
  });

  test('a daily budget that resets says to retry when the day ends', async () => {
    const { accountId, key } = await freshKey('daily');
    await gateway.server.storage.setBudget({ accountId, keyId: null, unit: 'tokens', limit: 40, period: 'day' });
    assert.equal((await post(gateway, '/v5/completions', fullLength, { 'x-api-key': key })).status, 200);
    const response = await post(gateway, '/v5/completions', { model: LOCAL, prompt: 'Hi', max_tokens: 30 }, { 'x-api-key': key });
    assertSignal(response, 429, true, /^[0-9]+$/);
    const now = new Date();
    const untilMidnight = (Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) / 1000;
    const retryAfter = Number(response.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && Math.abs(retryAfter - untilMidnight) <= 60, `retry-after ${retryAfter}, ${Math.round(untilMidnight)} s to midnight UTC`);
  });

  test('storage that cannot be reached says to retry shortly', async (t) => {
    // A key the gateway has not seen yet must be looked up in storage.
    const { key } = await freshKey('storage');
    // What storage throws when its database cannot answer.
    t.mock.method(gateway.server.storage, 'getKeyWithHash', async () => {
      throw storageUnavailable(new Error('database is locked'));
    });
    const response = await post(gateway, '/v5/completions', { model: LOCAL, prompt: 'Hi', max_tokens: 1 }, { 'x-api-key': key });
    assertSignal(response, 503, true, '1');
    assert.equal(response.body.error.code, 'storage_unavailable');
  });

  test('a ledger that cannot record says to retry shortly', async (t) => {
    t.mock.method(gateway.server.storage, 'recordUsage', async () => {
      throw new Error('disk I/O error');
    });
    const response = await post(gateway, '/v5/completions', { model: LOCAL, prompt: 'Hi', max_tokens: 1 });
    assertSignal(response, 503, true, '1');
    assert.equal(response.body.error.code, 'ledger_unavailable');
  });
});
