/**
 * Hostile input, property-based: 10,000 generated malformed and boundary requests (wrong types,
 * huge numbers, deep nesting, invalid UTF-8, enormous prompts and stop lists, duplicate keys, odd
 * headers) never get a 5xx, never crash the gateway, and every non-2xx is the one error shape.
 * Body and header size limits are enforced before the body is read.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { Pool } from 'undici';
import { startTestGateway, type TestGateway } from './support/test-gateway.js';
import { requestFields } from './support/request-fields.js';

const MODEL = 'local/tollgate-small';
const RUNS = 10_000;
const SEED = Number(process.env.FUZZ_SEED ?? 20_251_202);
let gateway: TestGateway;
let pool: Pool;

before(async () => {
  gateway = await startTestGateway({ TOLLGATE_HEADERS_TIMEOUT_MS: '2000' });
  pool = new Pool(gateway.url, { connections: 32, pipelining: 1, keepAliveTimeout: 10_000 });
});
after(async () => {
  await pool.close();
  await gateway.stop();
});

interface Sample {
  body: string | Buffer;
  headers: Record<string, string>;
}

const hugeNumbers = [
  '1e308',
  '-1e308',
  '1e999',
  '-0',
  '9007199254740993',
  '2147483648',
  '4294967296',
  '1.5',
  '0.0000001',
  '-1',
  '18446744073709551616',
  '1E+2',
  '00',
  '0x10',
];
const oddValues: fc.Arbitrary<unknown>[] = [
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 20 }),
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.integer(), { maxLength: 5 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 3 }),
  fc.constantFrom(-1, 0, 1, 2, 4, 5, 16, 20, 21, 128, 129, 256, 2048, 2049, 2 ** 31 - 1, 2 ** 31, 2 ** 53, -(2 ** 53), Number.MAX_VALUE, Number.MIN_VALUE),
  fc.constantFrom('', ' ', '\u0000', '\uD800', '💥', 'a'.repeat(300), '../../etc/passwd', 'local/../openai/x', 'http://127.0.0.1:1/', '%00', '\r\nx-evil: 1'),
];
const anyValue = fc.oneof(...oddValues);
/** A mostly valid request whose fields are then mutated. Valid ones stay small (max_tokens ≤ 2). */
const baseRequest = fc.record(
  {
    model: fc.constantFrom(MODEL, MODEL, MODEL, 'local/nope', 'nope/x', 'local', '/', MODEL.toUpperCase()),
    prompt: fc.oneof(
      fc.string({ minLength: 1, maxLength: 40 }),
      fc.array(fc.string({ minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 3 }),
      fc.array(fc.nat(100_300), { minLength: 1, maxLength: 5 }),
    ),
    max_tokens: fc.constantFrom(0, 1, 2),
    stream: fc.boolean(),
  },
  { requiredKeys: ['model', 'prompt', 'max_tokens'] },
);

const mutatedObject = fc
  .tuple(baseRequest, fc.array(fc.tuple(fc.constantFrom(...requestFields, '__proto__', 'constructor', 'extra', ''), anyValue), { maxLength: 4 }))
  .map(([request, mutations]) => {
    const body: Record<string, unknown> = { ...request };
    for (const [field, value] of mutations) body[field] = value;
    // Keep valid requests cheap: a mutation may not raise the work beyond a few tokens.
    if (typeof body.max_tokens === 'number' && body.max_tokens > 2 && body.max_tokens < 2 ** 31) body.max_tokens = 2;
    if (typeof body.n === 'number' && body.n > 2 && body.n <= 128) body.n = 129;
    if (typeof body.best_of === 'number' && body.best_of > 2 && body.best_of <= 20) body.best_of = 21;
    return JSON.stringify(body);
  });

const rawTexts = fc.oneof(
  // Numbers JSON can carry but JavaScript cannot represent faithfully.
  fc
    .tuple(fc.constantFrom('max_tokens', 'n', 'temperature', 'seed', 'logprobs', 'best_of', 'top_p'), fc.constantFrom(...hugeNumbers))
    .map(([field, number]) => `{"model":"${MODEL}","prompt":"Hi","max_tokens":1,"${field}":${number}}`),
  // Deep nesting, in the prompt, in logit_bias and as the whole body.
  fc.tuple(fc.integer({ min: 10, max: 20_000 }), fc.constantFrom('prompt', 'logit_bias', 'stop', 'body')).map(([depth, where]) => {
    const nest = '['.repeat(depth) + ']'.repeat(depth);
    return where === 'body' ? nest : `{"model":"${MODEL}","max_tokens":1,"prompt":"Hi","${where}":${nest}}`.replace('"prompt":"Hi","prompt"', '"prompt"');
  }),
  // Duplicate keys: the last one wins in JSON.parse, so both must be validated as one request.
  fc.constantFrom(
    `{"model":"nope/x","model":"${MODEL}","prompt":"Hi","max_tokens":1}`,
    `{"model":"${MODEL}","prompt":"Hi","max_tokens":1,"max_tokens":99999999999}`,
    `{"model":"${MODEL}","prompt":"Hi","max_tokens":1,"stream":true,"stream":"yes"}`,
    `{"__proto__":{"max_tokens":5},"model":"${MODEL}","prompt":"Hi","max_tokens":1}`,
    `{"constructor":{"prototype":{"polluted":1}},"model":"${MODEL}","prompt":"Hi","max_tokens":1}`,
  ),
  // Not JSON, truncated JSON, JSON that is not an object.
  fc.constantFrom(
    '',
    ' ',
    'null',
    'true',
    '1',
    '"x"',
    '[]',
    '{',
    '{"model":',
    '{"model":"a"',
    '{"a":1}}',
    '{}',
    'undefined',
    'NaN',
    '{"model":NaN}',
    "{'model':'x'}",
    '\u0000{}',
    '\uFEFF{}',
  ),
  fc.string({ maxLength: 200 }),
  // Enormous stop lists and prompt lists.
  fc
    .integer({ min: 5, max: 5_000 })
    .map((count) => JSON.stringify({ model: MODEL, prompt: 'Hi', max_tokens: 1, stop: Array.from({ length: count }, (_, index) => `s${index}`) })),
  fc.integer({ min: 2049, max: 3_000 }).map((count) => JSON.stringify({ model: MODEL, prompt: Array.from({ length: count }, () => 'p'), max_tokens: 1 })),
  fc.integer({ min: 1025, max: 3_000 }).map((count) =>
    JSON.stringify({
      model: MODEL,
      prompt: 'Hi',
      max_tokens: 1,
      logit_bias: Object.fromEntries(Array.from({ length: count }, (_, index) => [String(index), 1])),
    }),
  ),
);

/** Byte-level damage: invalid UTF-8 sequences spliced into an otherwise valid body. */
const invalidUtf8 = fc
  .tuple(
    fc.constantFrom([0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80], [0xe2, 0x82]),
    fc.constantFrom('prompt', 'model', 'stop', 'key'),
  )
  .map(([bytes, where]) => {
    const bad = Buffer.from(bytes).toString('latin1');
    const text =
      where === 'key'
        ? `{"model":"${MODEL}","prompt":"Hi","max_tokens":1,"${bad}":1}`
        : where === 'stop'
          ? `{"model":"${MODEL}","prompt":"Hi","max_tokens":1,"stop":["${bad}"]}`
          : where === 'model'
            ? `{"model":"local/${bad}","prompt":"Hi","max_tokens":1}`
            : `{"model":"${MODEL}","prompt":"H${bad}i","max_tokens":1}`;
    return Buffer.from(text, 'latin1');
  });

const headerSets = fc.record({
  contentType: fc.constantFrom(
    'application/json',
    'application/json',
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=latin1',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/jsonx',
    'APPLICATION/JSON',
    '',
  ),
  auth: fc.constantFrom('good', 'good', 'good', 'good', 'bearer', 'none', 'garbage', 'wrong-secret', 'huge', 'bearer-empty', 'two-schemes'),
  extra: fc.constantFrom<Record<string, string>>(
    {},
    {},
    { 'x-request-id': 'x'.repeat(300) },
    { 'x-request-id': '\t\u00ff' },
    { 'x-selected-account-id': 'acct_other' },
    { 'x-selected-account-id': '' },
    { accept: 'text/event-stream' },
    { 'content-encoding': 'gzip' },
    { 'accept-encoding': 'br;q=0' },
    { 'content-language': '\u00ff\u00fe' },
    { 'x-forwarded-host': 'evil.example' },
    { 'x-filler': 'a'.repeat(20_000) },
  ),
});

function headersFor(sample: { contentType: string; auth: string; extra: Record<string, string> }, key: string): Record<string, string> {
  const headers: Record<string, string> = { ...sample.extra };
  if (sample.contentType) headers['content-type'] = sample.contentType;
  const wrong = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
  switch (sample.auth) {
    case 'good':
      headers['x-api-key'] = key;
      break;
    case 'bearer':
      headers.authorization = `Bearer ${key}`;
      break;
    case 'garbage':
      headers['x-api-key'] = 'tg_\u00e9\u00e9';
      break;
    case 'wrong-secret':
      headers['x-api-key'] = wrong;
      break;
    case 'huge':
      headers['x-api-key'] = `tg_${'k'.repeat(10_000)}`;
      break;
    case 'bearer-empty':
      headers.authorization = 'Bearer ';
      break;
    case 'two-schemes':
      headers.authorization = `Basic ${key}`;
      break;
    default:
      break;
  }
  return headers;
}

const samples = fc.tuple(
  fc.oneof({ arbitrary: mutatedObject, weight: 6 }, { arbitrary: rawTexts, weight: 3 }, { arbitrary: invalidUtf8, weight: 1 }),
  headerSets,
);

async function send(sample: Sample): Promise<{ status: number; text: string; contentType: string }> {
  const response = await pool.request({
    path: '/v5/completions',
    method: 'POST',
    headers: sample.headers,
    body: sample.body,
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  });
  const text = await response.body.text();
  return { status: response.statusCode, text, contentType: String(response.headers['content-type'] ?? '') };
}

function checkErrorShape(status: number, text: string, context: string): void {
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    assert.fail(`${status} body is not JSON for ${context}: ${text.slice(0, 200)}`);
  }
  assert.ok(body && typeof body.error === 'object' && body.error !== null, `${status} without an error object for ${context}: ${text.slice(0, 200)}`);
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type'], context);
  assert.equal(typeof body.error.message, 'string');
  assert.equal(typeof body.error.type, 'string');
}

describe('fuzzed requests', () => {
  test(`${RUNS} generated hostile requests: no 5xx, no crash, always the error shape (seed ${SEED})`, async () => {
    const generated = fc.sample(samples, { numRuns: RUNS, seed: SEED });
    const statuses = new Map<number, number>();
    const started = performance.now();
    let next = 0;
    const worker = async () => {
      while (next < generated.length) {
        const [body, headerSample] = generated[next++];
        const sample: Sample = { body, headers: headersFor(headerSample, gateway.key) };
        const context = `${JSON.stringify(headerSample).slice(0, 200)} ${String(body).slice(0, 200)}`;
        const response = await send(sample);
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        assert.ok(response.status < 500, `${response.status} for ${context}: ${response.text.slice(0, 300)}`);
        if (response.status >= 300) checkErrorShape(response.status, response.text, context);
        else if (!response.contentType.startsWith('text/event-stream')) assert.equal(JSON.parse(response.text).object, 'text_completion', context);
        else assert.ok(response.text.endsWith('data: [DONE]\n\n'), context);
      }
    };
    await Promise.all(Array.from({ length: 32 }, worker));
    const seconds = (performance.now() - started) / 1000;
    const summary = JSON.stringify(Object.fromEntries([...statuses].sort()));
    // Some of every kind: successes, validation failures, auth failures, oversize headers.
    assert.ok((statuses.get(200) ?? 0) > 100, summary);
    assert.ok((statuses.get(400) ?? 0) > 1_000, summary);
    assert.ok((statuses.get(401) ?? 0) > 100, summary);
    assert.ok(seconds < 45, `${RUNS} requests took ${seconds.toFixed(1)} s`);
    assert.equal(gateway.logs.filter((line) => line.msg === 'unhandled error').length, 0, 'no unhandled errors were logged');
    const health = await fetch(`${gateway.url}/health`);
    assert.equal(health.status, 200);
  });

  test('a body over the limit is refused from its Content-Length, before it is sent', async () => {
    const socket = connect(Number(new URL(gateway.url).port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk;
    });
    // Announce 1 GiB, send only the headers: the 413 must come without the body.
    socket.write(
      `POST /v5/completions HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\nx-api-key: ${gateway.key}\r\ncontent-length: ${2 ** 30}\r\n\r\n`,
    );
    const deadline = Date.now() + 3_000;
    while (!answer.includes('\r\n\r\n') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    socket.destroy();
    assert.match(answer, /^HTTP\/1\.1 413/);
    checkErrorShape(
      413,
      answer
        .slice(answer.indexOf('\r\n\r\n') + 4)
        .replace(/^[0-9a-f]+\r\n/, '')
        .replace(/\r\n0\r\n\r\n$/, ''),
      '413',
    );
  });

  test('a chunked body that grows past the limit is cut off with a 413', async () => {
    const limit = 4 * 1024 * 1024;
    const piece = Buffer.alloc(512 * 1024, 'a');
    let sent = 0;
    const body = Readable.from(
      (async function* () {
        yield Buffer.from(`{"model":"${MODEL}","max_tokens":1,"prompt":"`);
        while (sent < limit * 4) {
          sent += piece.length;
          yield piece;
        }
        yield Buffer.from('"}');
      })(),
    );
    const response = await pool
      .request({ path: '/v5/completions', method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': gateway.key }, body })
      .catch((error: Error) => error);
    if (response instanceof Error) {
      // The gateway may close the connection while undici is still writing; it must not have read it all.
      assert.ok(sent < limit * 4, `the gateway read the whole ${sent}-byte body before refusing it`);
      return;
    }
    assert.equal(response.statusCode, 413);
    checkErrorShape(413, await response.body.text(), '413 chunked');
  });

  test('headers over the size limit get a 431 in the error shape', async () => {
    const response = await fetch(`${gateway.url}/v5/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': gateway.key, 'x-filler': 'a'.repeat(64 * 1024) },
      body: '{}',
    });
    assert.equal(response.status, 431);
    checkErrorShape(431, await response.text(), '431');
  });
});
