/**
 * The HTTP edges through the real server: malformed URLs, unknown routes and methods, encoded and
 * mislabelled bodies, CORS for the OpenAI and SGP SDKs in a browser, the way to the dashboard, and
 * requests that arrive while the server drains. Every error is in the OpenAI shape with its status.
 */
import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { deflateSync, gzipSync } from 'node:zlib';
import { startTestGateway, type TestGateway } from './support/test-gateway.js';

const MODEL = 'local/tollgate-small';
const ORIGIN = 'https://app.example';
let gateway: TestGateway;
before(async () => {
  gateway = await startTestGateway({ TOLLGATE_CORS_ORIGINS: ORIGIN });
});
after(() => gateway.stop());

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** One request on its own connection, exactly as given: any method, raw path, any body bytes. */
function send(method: string, path: string, headers: Record<string, string> = {}, body?: Buffer | string): Promise<Answer> {
  const url = new URL(gateway.url);
  const length = body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) };
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      { host: url.hostname, port: url.port, method, path, headers: { ...length, ...headers }, agent: false, timeout: 10_000 },
      (response) => {
        const pieces: Buffer[] = [];
        response.on('data', (piece: Buffer) => pieces.push(piece));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(pieces).toString('utf8') }));
        response.on('error', reject);
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error(`${method} ${path} timed out`)));
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** The response is the OpenAI error shape with this status, and carries a request id. */
function assertError(answer: Answer, status: number, code: string): { message: string; type: string; param: string | null; code: string | null } {
  assert.equal(answer.status, status, answer.text);
  assert.match(String(answer.headers['content-type']), /^application\/json/);
  assert.ok(answer.headers['x-request-id'], 'every response carries x-request-id');
  const body = JSON.parse(answer.text);
  assert.deepEqual(Object.keys(body), ['error']);
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type']);
  assert.equal(body.error.code, code);
  return body.error;
}

const completionJson = (prompt: string) => JSON.stringify({ model: MODEL, prompt, max_tokens: 2 });
const authed = (headers: Record<string, string> = {}) => ({ 'x-api-key': gateway.key, ...headers });

async function latestRecord() {
  const [record] = await gateway.server.storage.recentUsage({ accountId: gateway.accountId, limit: 1 });
  return record;
}

async function ledgerCount(): Promise<number> {
  return (await gateway.server.storage.queryUsage({ accountId: gateway.accountId })).totals.requests;
}

describe('malformed URLs', () => {
  for (const path of ['/v5/models?x=%zz', '/%', '/v5/mod%zzels', '/v5/completions?stream=%E0%A4%A']) {
    test(`${path} → 400 invalid_url`, async () => {
      const error = assertError(await send('GET', path, authed()), 400, 'invalid_url');
      assert.match(error.message, /percent-escape/);
      assert.equal(error.type, 'invalid_request_error');
    });
  }

  test('a well-formed escape in the query is fine', async () => {
    const answer = await send('GET', '/v5/models?x=%20ok', authed());
    assert.equal(answer.status, 200, answer.text);
  });
});

describe('what the HTTP parser refuses', () => {
  /** The raw answer to bytes written on a connection of their own. */
  async function raw(bytes: string): Promise<string> {
    const url = new URL(gateway.url);
    const socket = connect(Number(url.port), url.hostname);
    let answer = '';
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('utf8');
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('close', () => resolve());
      socket.once('error', reject);
      socket.write(bytes);
    });
    return answer;
  }

  test('headers over the size limit → 431 in the error shape, with x-request-id', async () => {
    const answer = await send('GET', '/health', { 'x-filler': 'a'.repeat(64 * 1024) });
    assertError(answer, 431, 'headers_too_large');
    assert.match(String(answer.headers['x-request-id']), /^req_[0-9a-f-]{36}$/);
  });

  test('a request line that is not HTTP → 400 in the error shape, with x-request-id', async () => {
    const answer = await raw('NOT HTTP AT ALL\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 400 /);
    assert.match(answer, /\r\nx-request-id: req_[0-9a-f-]{36}\r\n/i);
    assert.equal(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).error.code, 'bad_request');
  });
});

describe('unknown routes and methods', () => {
  const cases: [string, string, Record<string, string>, string | undefined][] = [
    ['PATCH', '/nope', { 'content-type': 'text/plain' }, 'hello'],
    ['DELETE', '/x', { 'content-type': 'application/json' }, '{"a":1}'],
    ['OPTIONS', '/x', {}, undefined],
    ['POST', '/v5/nothing-here', { 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': 'br' }, 'a=1'],
    ['GET', '/v5/completions/extra', {}, undefined],
  ];
  for (const [method, path, headers, body] of cases) {
    test(`${method} ${path} (${headers['content-type'] ?? 'no body'}) → 404 route_not_found`, async () => {
      const error = assertError(await send(method, path, authed(headers), body), 404, 'route_not_found');
      assert.ok(error.message.includes(path), error.message);
    });
  }

  test('a known path asked with another method → 405 with allow', async () => {
    const get = await send('GET', '/v5/completions', authed());
    assertError(get, 405, 'method_not_allowed');
    assert.equal(get.headers.allow, 'POST');
    const remove = await send('DELETE', '/v5/models', authed());
    assertError(remove, 405, 'method_not_allowed');
    assert.ok(String(remove.headers.allow).split(', ').includes('GET'), String(remove.headers.allow));
    // No Origin: CORS does not answer it, so it is a method the path does not serve.
    const options = await send('OPTIONS', '/v5/completions', {});
    assertError(options, 405, 'method_not_allowed');
  });
});

describe('request body encodings', () => {
  test('gzip, deflate and identity bodies are read', async () => {
    for (const [encoding, body] of [
      ['gzip', gzipSync(completionJson('Zipped'))],
      ['deflate', deflateSync(completionJson('Deflated'))],
      ['identity', Buffer.from(completionJson('Plain'))],
    ] as const) {
      const answer = await send('POST', '/v5/completions', authed({ 'content-type': 'application/json', 'content-encoding': encoding }), body);
      assert.equal(answer.status, 200, `${encoding}: ${answer.text}`);
      assert.equal(JSON.parse(answer.text).object, 'text_completion');
    }
  });

  test('a gzip bomb is cut off at the body limit with 413, and metered once', async () => {
    const before = await ledgerCount();
    // 32 MiB of JSON that compresses to a few KiB; the limit (4 MiB) counts decoded bytes.
    const bomb = gzipSync(Buffer.from(`{"model":"${MODEL}","prompt":"${'a'.repeat(32 * 1024 * 1024)}"}`));
    assert.ok(bomb.length < 64 * 1024, `${bomb.length} bytes on the wire`);
    const answer = await send('POST', '/v5/completions', authed({ 'content-type': 'application/json', 'content-encoding': 'gzip' }), bomb);
    assertError(answer, 413, 'request_too_large');
    assert.equal(answer.headers.connection, 'close');
    assert.equal(await ledgerCount(), before + 1);
    assert.equal((await latestRecord()).status, 413);
  });

  test('a body that is not what its encoding says → 400', async () => {
    const answer = await send(
      'POST',
      '/v5/completions',
      authed({ 'content-type': 'application/json', 'content-encoding': 'gzip' }),
      completionJson('not zipped'),
    );
    const error = assertError(answer, 400, 'invalid_content_encoding');
    assert.match(error.message, /gzip/);
  });

  for (const encoding of ['br', 'zstd', 'gzip, br', 'compress']) {
    test(`Content-Encoding: ${encoding} → 415 naming it`, async () => {
      const error = assertError(
        await send('POST', '/v5/completions', authed({ 'content-type': 'application/json', 'content-encoding': encoding }), completionJson('x')),
        415,
        'unsupported_content_encoding',
      );
      assert.ok(error.message.includes(`'${encoding}'`), error.message);
    });
  }
});

describe('content types', () => {
  for (const contentType of ['text/plain', 'text/plain; charset=utf-8', 'application/x-www-form-urlencoded', 'application/jsonx']) {
    test(`JSON sent as ${contentType} → 415 asking for application/json`, async () => {
      const error = assertError(
        await send('POST', '/v5/completions', authed({ 'content-type': contentType }), completionJson('x')),
        415,
        'unsupported_media_type',
      );
      assert.match(error.message, /application\/json/);
    });
  }

  test('an authenticated completion refused for its content type is metered once', async () => {
    const before = await ledgerCount();
    await send('POST', '/v5/completions', authed({ 'content-type': 'text/plain' }), completionJson('x'));
    assert.equal(await ledgerCount(), before + 1);
    const record = await latestRecord();
    assert.equal(record.status, 415);
    assert.equal(record.outcome, 'invalid_request');
  });

  test('application/json with a charset is read', async () => {
    const answer = await send('POST', '/v5/completions', authed({ 'content-type': 'application/json; charset=utf-8' }), completionJson('Hello'));
    assert.equal(answer.status, 200, answer.text);
  });
});

describe('CORS for the SDKs in a browser', () => {
  const sdkHeaders = [
    'x-stainless-arch',
    'x-stainless-lang',
    'x-stainless-os',
    'x-stainless-package-version',
    'x-stainless-retry-count',
    'x-stainless-runtime',
    'x-stainless-runtime-version',
    'x-stainless-timeout',
    'x-stainless-helper-method',
    'x-stainless-async',
    'x-selected-account-id',
    'authorization',
    'x-api-key',
    'content-type',
    'idempotency-key',
    'openai-organization',
    'openai-project',
    'x-request-id',
  ];

  test('a preflight allows every header the OpenAI and SGP SDKs send', async () => {
    const answer = await send('OPTIONS', '/v5/completions', {
      origin: ORIGIN,
      'access-control-request-method': 'POST',
      'access-control-request-headers': sdkHeaders.join(','),
    });
    assert.equal(answer.status, 204);
    assert.equal(answer.headers['access-control-allow-origin'], ORIGIN);
    assert.match(String(answer.headers['access-control-allow-methods']), /POST/);
    const allowed = String(answer.headers['access-control-allow-headers']).split(', ');
    for (const name of sdkHeaders) assert.ok(allowed.includes(name), `${name} not allowed: ${allowed.join(', ')}`);
  });

  test('a preflight does not allow arbitrary headers', async () => {
    const answer = await send('OPTIONS', '/v5/completions', {
      origin: ORIGIN,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'x-evil, x-stainless-os',
    });
    const allowed = String(answer.headers['access-control-allow-headers']).split(', ');
    assert.ok(!allowed.includes('x-evil'));
    assert.ok(allowed.includes('x-stainless-os'));
  });

  test('responses, errors included, expose the headers a page needs', async () => {
    const wanted = [
      'x-request-id',
      'retry-after',
      'x-should-retry',
      'x-tollgate-emulated',
      'x-ratelimit-limit-requests',
      'x-ratelimit-remaining-requests',
      'x-ratelimit-reset-requests',
      'x-ratelimit-limit-tokens',
      'x-ratelimit-remaining-tokens',
      'x-ratelimit-reset-tokens',
      'idempotent-replayed',
    ];
    const success = await send('POST', '/v5/completions', authed({ origin: ORIGIN, 'content-type': 'application/json' }), completionJson('Hi'));
    const refused = await send('POST', '/v5/completions', { origin: ORIGIN, 'content-type': 'application/json' }, completionJson('Hi'));
    assert.equal(success.status, 200, success.text);
    assertError(refused, 401, 'invalid_api_key');
    for (const answer of [success, refused]) {
      assert.equal(answer.headers['access-control-allow-origin'], ORIGIN);
      const exposed = String(answer.headers['access-control-expose-headers']).split(', ');
      for (const name of wanted) assert.ok(exposed.includes(name), `${name} not exposed: ${exposed.join(', ')}`);
    }
  });
});

test('GET / leads to the dashboard', async () => {
  const answer = await send('GET', '/');
  assert.equal(answer.status, 302);
  assert.equal(answer.headers.location, '/dashboard/');
});

test('a request that arrives while the server drains gets 503 in the error shape; the stream in flight finishes', async () => {
  const draining = await startTestGateway();
  try {
    const url = new URL(draining.url);
    const body = JSON.stringify({ model: MODEL, prompt: 'We the people', max_tokens: 4000, stream: true, logit_bias: { '100257': -100 } });
    const socket = connect(Number(url.port), url.hostname);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    let raw = '';
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const firstByte = new Promise<void>((resolve) => socket.once('data', () => resolve()));
    socket.on('data', (chunk: Buffer) => {
      raw += chunk.toString('utf8');
    });
    socket.write(
      `POST /v5/completions HTTP/1.1\r\nhost: ${url.host}\r\nx-api-key: ${draining.key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await firstByte;
    const stopped = draining.stop();
    // The drain has begun once the server refuses new connections; the stream is still running.
    for (let attempt = 0; attempt < 200; attempt++) {
      const refused = await fetch(`${draining.url}/health`).then(
        () => false,
        () => true,
      );
      if (refused) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    // A request on the connection already open reaches the draining server.
    socket.write(`GET /health HTTP/1.1\r\nhost: ${url.host}\r\n\r\n`);
    await stopped;
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 5_000))]);
    socket.destroy();
    assert.ok(raw.includes('event: done\ndata: [DONE]\n\n'), 'the stream in flight was cut');
    const late = raw.slice(raw.lastIndexOf('HTTP/1.1 '));
    assert.match(late, /^HTTP\/1\.1 503 /);
    assert.match(late, /\r\nx-should-retry: true\r\n/i);
    assert.match(late, /\r\nx-request-id: req_/i);
    const error = JSON.parse(late.slice(late.indexOf('\r\n\r\n') + 4)).error;
    assert.equal(error.code, 'shutting_down');
    assert.equal(error.type, 'service_unavailable');
  } finally {
    await draining.stop();
  }
});
