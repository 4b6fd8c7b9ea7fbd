/**
 * Security properties a user relies on: keys stored only as hashes, no secret or prompt in any log
 * line at the default level, admin endpoints behind the admin key, no request field that can steer
 * an upstream URL or header (SSRF), account isolation, unguessable ids, CORS off, and error
 * messages that never echo a secret.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { generateKey } from '../src/auth/api-keys.js';
import { FaultUpstream } from './support/fault-upstream.js';
import { get, post, startTestGateway, type TestGateway } from './support/test-gateway.js';

const VENDOR_KEY = 'sk-vendor-SECRET-9f8e7d6c5b4a3210';
const ADMIN_KEY = 'admin-SECRET-0123456789abcdef';
const PROMPT_MARKER = 'PROMPT-MARKER-do-not-log-7731';
const dir = mkdtempSync(join(tmpdir(), 'tollgate-security-'));
let gateway: TestGateway;
let upstream: FaultUpstream;
let other: { accountId: string; key: string };

before(async () => {
  upstream = await FaultUpstream.start();
  const configPath = join(dir, 'tollgate.json');
  writeFileSync(configPath, JSON.stringify({ vendors: { openai: { maxRetries: 0, idleTimeoutMs: 2_000, responseTimeoutMs: 2_000 } } }));
  // The default log level (LOG_LEVEL unset → info).
  gateway = await startTestGateway({
    LOG_LEVEL: '',
    OPENAI_API_KEY: VENDOR_KEY,
    OPENAI_BASE_URL: upstream.url,
    TOLLGATE_ADMIN_KEY: ADMIN_KEY,
    TOLLGATE_CONFIG: configPath,
  });
  const account = await gateway.server.storage.createAccount('other');
  const generated = generateKey();
  await gateway.server.storage.createKey({
    id: generated.id,
    accountId: account.id,
    name: 'other',
    prefix: generated.prefix,
    secretHash: generated.secretHash,
  });
  other = { accountId: account.id, key: generated.key };
});
after(async () => {
  await gateway.stop();
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

const MODEL = 'local/tollgate-small';

describe('keys', () => {
  test('keys are stored only as hashes: the database file never holds a key or its secret', async () => {
    const secret = gateway.key.split('_')[2];
    const stored = await gateway.server.storage.getKeyWithHash(`key_${gateway.key.split('_')[1]}`);
    assert.ok(stored);
    assert.match(stored.secretHash, /^[0-9a-f]{64}$/);
    assert.ok(!JSON.stringify(stored).includes(secret));
    const tmp = readdirSync(tmpdir()).filter((name) => name.startsWith('tollgate-test-'));
    let scanned = 0;
    for (const name of tmp) {
      // Other test files run gateways in parallel: their directories may vanish while we scan.
      let files: string[] = [];
      try {
        files = readdirSync(join(tmpdir(), name));
      } catch {
        continue;
      }
      for (const file of files) {
        let bytes: Buffer;
        try {
          bytes = readFileSync(join(tmpdir(), name, file));
        } catch {
          continue;
        }
        assert.ok(!bytes.includes(secret), `${file} holds a key secret`);
        scanned++;
      }
    }
    assert.ok(scanned > 0);
  });

  test('a wrong secret for a real key id and an unknown key id get the same answer (no oracle)', async () => {
    const [, id, secret] = gateway.key.split('_');
    const wrongSecret = `tg_${id}_${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
    const unknownId = `tg_${'Z'.repeat(12)}_${secret}`;
    const answers = await Promise.all(
      [wrongSecret, unknownId, 'tg_short'].map((key) => post(gateway, '/v5/completions', { model: MODEL, prompt: 'Hi', max_tokens: 1 }, { 'x-api-key': key })),
    );
    for (const answer of answers) {
      assert.equal(answer.status, 401);
      assert.equal(answer.body.error.message, 'Invalid API key.');
      assert.ok(!answer.text.includes(secret), 'the error echoed the secret');
    }
  });
});

describe('admin endpoints', () => {
  test('need the admin key: none, an account key, a near miss → 401; the admin key → 200', async () => {
    for (const headers of [
      { 'x-api-key': '' },
      { 'x-api-key': gateway.key },
      { 'x-api-key': `${ADMIN_KEY}x` },
      { 'x-api-key': '', authorization: `Bearer ${ADMIN_KEY.slice(0, -1)}` },
    ] as Record<string, string>[]) {
      const response = await get(gateway, '/admin/accounts', headers);
      assert.equal(response.status, 401, JSON.stringify(headers));
      assert.equal(response.body.error.code, 'invalid_admin_key');
      assert.ok(!response.text.includes(ADMIN_KEY));
    }
    const created = await post(gateway, '/admin/accounts', { name: 'x' }, { 'x-api-key': gateway.key });
    assert.equal(created.status, 401);
    const ok = await get(gateway, '/admin/accounts', { 'x-api-key': ADMIN_KEY });
    assert.equal(ok.status, 200);
    const bearer = await get(gateway, '/admin/accounts', { 'x-api-key': '', authorization: `Bearer ${ADMIN_KEY}` });
    assert.equal(bearer.status, 200);
  });
});

describe('account isolation', () => {
  test("an account never reads another account's usage", async () => {
    assert.equal((await post(gateway, '/v5/completions', { model: MODEL, prompt: 'Hi', max_tokens: 1 })).status, 200);
    const mine = await get(gateway, '/v5/usage');
    assert.ok(mine.body.totals.requests >= 1);
    const theirs = await get(gateway, '/v5/usage?group_by=key', { 'x-api-key': other.key });
    assert.equal(theirs.status, 200);
    assert.equal(theirs.body.account_id, other.accountId);
    assert.equal(theirs.body.totals.requests, 0);
    const steered = await get(gateway, `/v5/usage?account_id=${gateway.accountId}`, { 'x-api-key': other.key });
    assert.equal(steered.status, 400);
    const selected = await get(gateway, '/v5/usage', { 'x-api-key': other.key, 'x-selected-account-id': gateway.accountId });
    assert.equal(selected.status, 403);
    const adminUsage = await get(gateway, `/admin/usage?account_id=${gateway.accountId}`, { 'x-api-key': other.key });
    assert.equal(adminUsage.status, 401);
  });

  test("an account cannot use another account's key to act as it", async () => {
    const before = (await gateway.server.storage.queryUsage({ accountId: other.accountId })).totals.requests;
    const response = await post(
      gateway,
      '/v5/completions',
      { model: MODEL, prompt: 'Hi', max_tokens: 1 },
      { 'x-api-key': gateway.key, 'x-selected-account-id': other.accountId },
    );
    assert.equal(response.status, 403);
    assert.equal(response.body.error.code, 'account_mismatch');
    assert.equal((await gateway.server.storage.queryUsage({ accountId: other.accountId })).totals.requests, before);
  });
});

describe('no SSRF: request fields never steer the upstream', () => {
  const hostile = [
    'openai/../../admin',
    'openai/..%2F..%2Fadmin',
    'openai/x@evil.example',
    'openai/x?redirect=http://evil.example',
    'openai/x#fragment',
    'openai/http://evil.example/v1',
    'openai///evil.example/x',
    'openai/x\r\nHost: evil.example',
    'openai/x\r\n\r\nGET / HTTP/1.1',
    'openai/%0d%0aX-Injected: 1',
    'openai/\\\\evil.example\\x',
  ];
  test('model names with ../ @ ? # full URLs and CRLF reach only the configured path and host', async () => {
    upstream.use('ok');
    for (const model of hostile) {
      const response = await post(
        gateway,
        '/v5/completions',
        { model, prompt: 'Hi', max_tokens: 1, user: 'u\r\nX-Injected: 1' },
        { 'x-forwarded-host': 'evil.example', 'x-api-key': gateway.key },
      );
      assert.ok(response.status < 500, `${model}: ${response.status} ${response.text}`);
    }
    assert.ok(upstream.requests.length > 0, 'no request reached the upstream at all');
    const expectedHost = new URL(upstream.url).host;
    for (const seen of upstream.requests) {
      assert.equal(seen.url, '/v1/completions', `upstream path ${seen.url}`);
      assert.equal(seen.headers.host, expectedHost);
      assert.equal(seen.headers.authorization, `Bearer ${VENDOR_KEY}`);
      assert.equal(seen.headers['x-injected'], undefined);
      assert.equal(seen.headers['x-forwarded-host'], undefined);
      assert.equal(seen.headers['x-api-key'], undefined, 'the client key was forwarded upstream');
    }
  });

  test('client headers (auth, host, request id) are not forwarded upstream', async () => {
    upstream.use('ok');
    const response = await post(
      gateway,
      '/v5/completions',
      { model: 'openai/gpt-3.5-turbo-instruct', prompt: 'Hi', max_tokens: 1 },
      { authorization: 'Bearer attacker', 'x-request-id': 'client-chosen-id', 'x-api-key': gateway.key },
    );
    assert.equal(response.status, 200, response.text);
    const seen = upstream.requests.at(-1)!;
    assert.equal(seen.headers.authorization, `Bearer ${VENDOR_KEY}`);
    assert.match(String(seen.headers['x-request-id']), /^cmpl-[0-9a-z]{8}[A-Za-z0-9_-]{24}$/);
  });
});

describe('ids, CORS, error messages', () => {
  test('request and completion ids are unguessable and unique', async () => {
    const responses = await Promise.all(
      Array.from({ length: 40 }, () => post(gateway, '/v5/completions', { model: MODEL, prompt: 'Hi', max_tokens: 1 }, { 'x-api-key': gateway.key })),
    );
    const requestIds = responses.map((response) => response.headers.get('x-request-id')!);
    const completionIds = responses.map((response) => response.body.id as string);
    for (const id of requestIds) assert.match(id, /^req_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    for (const id of completionIds) assert.match(id, /^cmpl-[0-9a-z]{8}[A-Za-z0-9_-]{24}$/);
    assert.equal(new Set(requestIds).size, requestIds.length);
    assert.equal(new Set(completionIds).size, completionIds.length);
  });

  test('CORS is off: no access-control-allow-* on responses or on a preflight', async () => {
    const origin = 'https://evil.example';
    const answers = [
      await fetch(`${gateway.url}/v5/completions`, {
        method: 'POST',
        headers: { origin, 'content-type': 'application/json', 'x-api-key': gateway.key },
        body: JSON.stringify({ model: MODEL, prompt: 'Hi', max_tokens: 1 }),
      }),
      await fetch(`${gateway.url}/v5/models`, { headers: { origin, 'x-api-key': gateway.key } }),
      await fetch(`${gateway.url}/v5/completions`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key,content-type' },
      }),
      await fetch(`${gateway.url}/admin/accounts`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'GET' } }),
    ];
    for (const answer of answers) {
      await answer.arrayBuffer();
      for (const [name] of answer.headers) assert.ok(!name.startsWith('access-control-'), `${answer.url}: ${name}`);
    }
    assert.ok(answers[2].status >= 400, 'a preflight must not succeed');
  });

  test('vendor errors never echo the vendor key to the client', async () => {
    upstream.use('ok');
    const echoes = [401, 400, 500, 429];
    for (const status of echoes) {
      const response = await postWithUpstreamError(status, `Incorrect API key provided: ${VENDOR_KEY}. You can find your key at ...`);
      assert.ok(response.status >= 400);
      assert.ok(!response.text.includes(VENDOR_KEY), `HTTP ${status} echoed the vendor key: ${response.text}`);
      assert.ok(!response.text.includes(VENDOR_KEY.slice(3)), `HTTP ${status} echoed part of the vendor key`);
    }
  });
});

/** One call whose upstream answers `status` with `message` in the OpenAI error body. */
async function postWithUpstreamError(status: number, message: string) {
  const original = upstream.fault;
  upstream.use('ok');
  // A one-off upstream for this status: the fault upstream's fixed replies do not carry a message.
  const { createServer } = await import('node:http');
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message, type: 'invalid_request_error', code: 'invalid_api_key' } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const configPath = join(dir, `echo-${status}.json`);
  writeFileSync(configPath, JSON.stringify({ vendors: { openai: { maxRetries: 0, maxRetryAfterMs: 0 } } }));
  const echoGateway = await startTestGateway({ OPENAI_API_KEY: VENDOR_KEY, OPENAI_BASE_URL: `http://127.0.0.1:${port}`, TOLLGATE_CONFIG: configPath });
  try {
    const response = await post(
      echoGateway,
      '/v5/completions',
      { model: 'openai/gpt-3.5-turbo-instruct', prompt: 'Hi', max_tokens: 1 },
      { 'x-api-key': echoGateway.key },
    );
    for (const line of echoGateway.rawLogs) assert.ok(!line.includes(VENDOR_KEY), `a log line holds the vendor key: ${line}`);
    return response;
  } finally {
    await echoGateway.stop();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    upstream.use(original);
  }
}

describe('logs', () => {
  test('no key, vendor key, admin key or prompt text in any log line of a run with real traffic and errors', async () => {
    const secret = gateway.key.split('_')[2];
    const otherSecret = other.key.split('_')[2];
    const body = { model: MODEL, prompt: `${PROMPT_MARKER} hello`, max_tokens: 2 };
    // Successes, streams, validation errors, auth errors, vendor errors, an oversized body, admin calls.
    await post(gateway, '/v5/completions', body);
    await post(gateway, '/v5/completions', { ...body, stream: true });
    await post(gateway, '/v5/completions', { ...body, max_tokens: -1 });
    await post(gateway, '/v5/completions', { ...body, stop: [PROMPT_MARKER, '', 'x'] });
    await post(gateway, '/v5/completions', { ...body, model: 'local/no-such-model' });
    await post(gateway, '/v5/completions', body, { 'x-api-key': `${gateway.key}x` });
    await post(gateway, '/v5/completions', body, { 'x-api-key': '', authorization: `Bearer ${other.key.slice(0, -2)}` });
    await post(gateway, '/v5/completions', `{"prompt": "${PROMPT_MARKER}", broken`, {});
    for (const fault of ['500', 'hang', 'reset-mid-stream', 'invalid-json', 'error-200'] as const) {
      upstream.use(fault);
      await post(gateway, '/v5/completions', { ...body, model: 'openai/gpt-3.5-turbo-instruct', stream: fault === 'reset-mid-stream' });
    }
    upstream.use('ok');
    await get(gateway, '/admin/accounts', { 'x-api-key': ADMIN_KEY });
    await get(gateway, '/admin/accounts', { 'x-api-key': `${ADMIN_KEY}-wrong` });
    await fetch(`${gateway.url}/v5/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': gateway.key, 'x-filler': 'f'.repeat(40_000) },
      body: '{}',
    })
      .then((r) => r.arrayBuffer())
      .catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.ok(gateway.rawLogs.length > 10, `only ${gateway.rawLogs.length} log lines`);
    for (const line of gateway.rawLogs) {
      for (const [what, value] of [
        ['api key', gateway.key],
        ['key secret', secret],
        ['other key secret', otherSecret],
        ['vendor key', VENDOR_KEY],
        ['admin key', ADMIN_KEY],
        ['prompt', PROMPT_MARKER],
      ] as const) {
        assert.ok(!line.includes(value), `a log line holds the ${what}: ${line.slice(0, 300)}`);
      }
    }
  });
});
