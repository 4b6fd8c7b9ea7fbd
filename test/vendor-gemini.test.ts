/** The `gemini` vendor against a mock upstream speaking generateContent and streamGenerateContent?alt=sse. */
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { createGeminiAdapter } from '../src/vendors/gemini/gemini-adapter.js';
import type { GenerationRequest, VendorAdapter } from '../src/vendors/types.js';
import { VendorError } from '../src/errors/vendor-error.js';
import { MockUpstream } from './support/mock-upstream.js';
import {
  adapterOf,
  collect,
  collectUntilError,
  fastTransport,
  finishes,
  modelOf,
  request,
  testConfig,
  textOf,
  usages,
} from './support/mock-upstream-helpers.js';
import { fixture } from './support/vendor-fixtures.js';
import { geminiGenerateContent } from './support/vendor-wire.js';

const key = 'AIzaSyTestKey0123456789';
const model = 'gemini-2.5-flash';
let upstream: MockUpstream;
let adapter: VendorAdapter;

const billed = { prompt: 8, completion: 5 };

before(async () => {
  upstream = await MockUpstream.start();
  adapter = adapterOf(createGeminiAdapter(testConfig({ GEMINI_API_KEY: key, GEMINI_BASE_URL: upstream.url }, { gemini: fastTransport })));
});
beforeEach(() => upstream.reset());
after(async () => {
  await adapter.close?.();
  await upstream.close();
});

test('stream: exact outbound request, text, usage with cached and thoughts (= reasoning) tokens', async () => {
  upstream.reply(fixture('gemini/stream-thinking.sse'));
  const generation = request({
    model,
    prompt: 'Greet',
    maxTokens: 64,
    temperature: 1.5,
    topP: 0.8,
    stop: ['x', 'y'],
    seed: 9,
    presencePenalty: 0.1,
    frequencyPenalty: 0.2,
  });
  assert.deepEqual(adapter.prepare(generation, modelOf(adapter, model)).emulated, []);
  const parts = await collect(adapter, generation);
  const sent = upstream.requests[0];
  assert.equal(sent.url, `/v1beta/models/${model}:streamGenerateContent?alt=sse`);
  assert.equal(sent.headers['x-goog-api-key'], key);
  assert.ok(!sent.url.includes(key), 'key in the header, never the URL');
  assert.deepEqual(sent.body, {
    contents: [{ role: 'user', parts: [{ text: 'Greet' }] }],
    generationConfig: { maxOutputTokens: 64, temperature: 1.5, topP: 0.8, stopSequences: ['x', 'y'], seed: 9, presencePenalty: 0.1, frequencyPenalty: 0.2 },
  });
  assert.equal(textOf(parts), 'Hello');
  assert.deepEqual(finishes(parts), { 0: 'stop' });
  assert.deepEqual(usages(parts), [{ promptTokens: 8, completionTokens: 25, cachedTokens: 4, reasoningTokens: 20 }]);
});

test('non-stream: :generateContent, finish reasons mapped', async () => {
  for (const [reason, expected] of [
    ['MAX_TOKENS', 'length'],
    ['SAFETY', 'content_filter'],
    ['STOP', 'stop'],
  ]) {
    upstream.reset();
    upstream.reply(geminiGenerateContent.json({ texts: ['whole answer'], usage: { prompt: 8, completion: 2 }, finishReasons: [reason] }));
    const parts = await collect(adapter, request({ model, stream: false }));
    assert.equal(upstream.requests[0].url, `/v1beta/models/${model}:generateContent`);
    assert.equal(textOf(parts), 'whole answer');
    assert.deepEqual(finishes(parts), { 0: expected });
    assert.equal(usages(parts)[0].completionTokens, 2);
  }
});

test('blocked prompt (no candidates, promptFeedback.blockReason) → content_filter', async () => {
  upstream.reply(fixture('gemini/blocked-prompt.json'));
  const parts = await collect(adapter, request({ model, stream: false }));
  assert.deepEqual(finishes(parts), { 0: 'content_filter' });
  assert.equal(textOf(parts), '');
});

test('n emulated with parallel calls (seed + j), prompt list fan-out, echo prepended', async () => {
  upstream.always({
    answer: (recorded) =>
      geminiGenerateContent.stream({ texts: [`(${recorded.body.contents[0].parts[0].text}:${recorded.body.generationConfig.seed})`], usage: billed }),
  });
  const generation = request({ model, prompt: ['p', 'q'], n: 3, seed: 100, echo: true });
  assert.deepEqual(adapter.prepare(generation, modelOf(adapter, model)).emulated, ['prompt', 'n', 'echo']);
  const parts = await collect(adapter, generation);
  assert.equal(upstream.requests.length, 6);
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5].map((choice) => textOf(parts, choice)),
    ['p(p:100)', 'p(p:101)', 'p(p:102)', 'q(q:100)', 'q(q:101)', 'q(q:102)'],
  );
  assert.equal(usages(parts).length, 6);
});

test('refusals name the parameter and the vendor', () => {
  const info = modelOf(adapter, model);
  const cases: Array<[Partial<GenerationRequest>, string]> = [
    [{ logprobs: 1 }, 'logprobs'],
    [{ logitBias: { '1': 1 } }, 'logit_bias'],
    [{ user: 'u' }, 'user'],
    [{ suffix: 's' }, 'suffix'],
    [{ bestOf: 2 }, 'best_of'],
  ];
  for (const [overrides, param] of cases) {
    assert.throws(
      () => adapter.prepare(request({ model, ...overrides }), info),
      (error: any) => error.status === 400 && error.param === param && error.message.includes("'gemini'"),
      param,
    );
  }
});

test('errors before output: invalid key (400 API_KEY_INVALID) → 502, 404 → model_not_found, 429 RetryInfo → retry-after', async () => {
  upstream.reply(fixture('gemini/error-api-key-invalid.json', { status: 400 }));
  let { error } = await collectUntilError(adapter, request({ model }));
  assert.deepEqual([error.status, error.code], [502, 'upstream_auth_failed']);
  assert.match(error.message, /GEMINI_API_KEY/);

  upstream.reset();
  upstream.reply(fixture('gemini/error-model-not-found.json', { status: 404 }));
  ({ error } = await collectUntilError(adapter, request({ model: 'gemini-9' })));
  assert.deepEqual([error.status, error.code], [404, 'model_not_found']);

  upstream.reset();
  upstream.always(fixture('gemini/error-quota-retry-delay.json', { status: 429 }));
  ({ error } = await collectUntilError(adapter, request({ model })));
  assert.deepEqual([error.status, error.retryAfterSeconds, error.headers['retry-after']], [429, 37, '37']);
  assert.equal(upstream.requests.length, 1, '37 s exceeds maxRetryAfterMs: not waited for');

  upstream.reset();
  upstream.reply(fixture('gemini/error-invalid-temperature.json', { status: 400 }));
  ({ error } = await collectUntilError(adapter, request({ model })));
  assert.equal(error.status, 400);
  assert.equal(error.message, "The 'gemini' vendor rejected the request: Invalid value at generation_config.temperature");
});

test('504 DEADLINE_EXCEEDED is a timeout: 504 upstream_timeout, retried', async () => {
  upstream.always(fixture('gemini/error-deadline-exceeded.json', { status: 504 }));
  const { error } = await collectUntilError(adapter, request({ model }));
  assert.deepEqual([error.status, error.code, error.retryable], [504, 'upstream_timeout', true]);
  assert.match(error.message, /'gemini' vendor timed out/);
  assert.ok(upstream.requests.length > 1, 'retried');
});

test('400 FAILED_PRECONDITION (billing not enabled) is the gateway account, not the request: 502 upstream_quota_exhausted, final', async () => {
  upstream.always(fixture('gemini/error-free-tier-unavailable.json', { status: 400 }));
  const { error } = await collectUntilError(adapter, request({ model }));
  assert.deepEqual([error.status, error.code, error.retryable], [502, 'upstream_quota_exhausted', false]);
  assert.match(error.message, /'gemini'.*enable billing/);
  assert.equal(upstream.requests.length, 1);
});

test('500 retried then success', async () => {
  upstream.reply(geminiGenerateContent.error(500, 'Internal error'), geminiGenerateContent.stream({ texts: ['ok'], usage: billed }));
  assert.equal(textOf(await collect(adapter, request({ model }))), 'ok');
  assert.equal(upstream.requests.length, 2);
});

test('error after output and broken chunk → VendorError from the iterator, not retried', async () => {
  upstream.reply(fixture('gemini/stream-error-after-output.sse'));
  let { parts, error } = await collectUntilError(adapter, request({ model }));
  assert.equal(textOf(parts), 'so far');
  assert.ok(error instanceof VendorError);
  assert.equal(error.status, 502);
  assert.match(error.message, /gemini.*overloaded/);
  assert.equal(upstream.requests.length, 1);

  upstream.reset();
  upstream.reply(fixture('gemini/stream-broken.sse'));
  ({ parts, error } = await collectUntilError(adapter, request({ model })));
  assert.deepEqual([error.status, error.code], [502, 'upstream_malformed']);
  assert.equal(upstream.requests.length, 1);
});

test('client abort: the upstream sees the connection close', async () => {
  upstream.reply(geminiGenerateContent.hangAfterOutput('one', billed));
  const controller = new AbortController();
  const iterator = adapter
    .stream(request({ model }), modelOf(adapter, model), { signal: controller.signal, requestId: 'r', reportUsage: () => {} })
    [Symbol.asyncIterator]();
  assert.equal((await iterator.next()).value?.[0]?.type, 'text-delta');
  const pending = iterator.next();
  controller.abort();
  await assert.rejects(pending, (error: any) => error.name === 'AbortError');
  assert.equal(await upstream.requests[0].closedEarly, true);
});

test('idle timeout mid-stream after output → 504 VendorError', async () => {
  const slow = adapterOf(
    createGeminiAdapter(testConfig({ GEMINI_API_KEY: key, GEMINI_BASE_URL: upstream.url }, { gemini: { ...fastTransport, idleTimeoutMs: 150 } })),
  );
  upstream.reply(geminiGenerateContent.hangAfterOutput('start', billed));
  const { parts, error } = await collectUntilError(slow, request({ model }));
  await slow.close?.();
  assert.equal(textOf(parts), 'start');
  assert.deepEqual([error.status, error.code], [504, 'upstream_timeout']);
});

test('catalogue and enabling', () => {
  assert.ok(adapter.listModels().some((info) => info.id === 'gemini/gemini-2.5-pro' && info.contextWindow === 1_048_576));
  assert.match(createGeminiAdapter(testConfig({})) as string, /GEMINI_API_KEY/);
});
