/** The `anthropic` vendor against a mock upstream speaking the Messages API and its SSE events. */
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { createAnthropicAdapter } from '../src/vendors/anthropic/anthropic-adapter.js';
import type { GenerationRequest, VendorAdapter } from '../src/vendors/types.js';
import { VendorError } from '../src/errors/vendor-error.js';
import { MockUpstream, sse } from './support/mock-upstream.js';
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
import { anthropicMessages } from './support/vendor-wire.js';

const key = 'sk-ant-test-key-abcdef123456';
const model = 'claude-sonnet-4-5';
let upstream: MockUpstream;
let adapter: VendorAdapter;

/** 55 prompt tokens, 40 of them read from the cache. */
const billed = { prompt: 55, completion: 9, cached: 40 };
const answerOf = (texts: string[], finishReason?: string) => ({ texts: [texts], usage: billed, finishReasons: finishReason ? [finishReason] : undefined });

before(async () => {
  upstream = await MockUpstream.start();
  adapter = adapterOf(createAnthropicAdapter(testConfig({ ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: upstream.url }, { anthropic: fastTransport })));
});
beforeEach(() => upstream.reset());
after(async () => {
  await adapter.close?.();
  await upstream.close();
});

test('stream: exact outbound request and normalised usage with cache reads and writes', async () => {
  upstream.reply(fixture('anthropic/stream-cache-usage.sse'));
  const generation = request({ model, prompt: 'Say hello', maxTokens: 50, temperature: 0.5, topP: 0.9, stop: ['END'], user: 'user-7' });
  assert.deepEqual(adapter.prepare(generation, modelOf(adapter, model)).emulated, []);
  const parts = await collect(adapter, generation);
  const sent = upstream.requests[0];
  assert.equal(sent.url, '/v1/messages');
  assert.equal(sent.headers['x-api-key'], key);
  assert.equal(sent.headers['anthropic-version'], '2023-06-01');
  assert.equal(sent.headers.authorization, undefined);
  assert.deepEqual(sent.body, {
    model,
    max_tokens: 50,
    messages: [{ role: 'user', content: 'Say hello' }],
    stop_sequences: ['END'],
    temperature: 0.5,
    top_p: 0.9,
    metadata: { user_id: 'user-7' },
    stream: true,
  });
  assert.equal(textOf(parts), 'Hello');
  assert.deepEqual(finishes(parts), { 0: 'stop' });
  assert.deepEqual(usages(parts), [{ promptTokens: 55, completionTokens: 9, cachedTokens: 40, cacheWriteTokens: 3, reasoningTokens: null }]);
});

test('finish reasons: max_tokens → length, refusal → content_filter, stop_sequence → stop', async () => {
  for (const [stopReason, expected] of [
    ['max_tokens', 'length'],
    ['refusal', 'content_filter'],
    ['stop_sequence', 'stop'],
  ]) {
    upstream.reply(anthropicMessages.stream(answerOf(['x'], stopReason)));
    assert.deepEqual(finishes(await collect(adapter, request({ model }))), { 0: expected });
  }
});

test('non-stream: non-stream upstream call, message parsed', async () => {
  upstream.reply(fixture('anthropic/message-max-tokens.json'));
  const parts = await collect(adapter, request({ model, stream: false }));
  assert.equal(upstream.requests[0].body.stream, undefined);
  assert.equal(textOf(parts), 'Hi there');
  assert.deepEqual(finishes(parts), { 0: 'length' });
  assert.equal(usages(parts)[0].promptTokens, 5);
});

test('stop Anthropic rejects (whitespace-only) is enforced by the gateway across chunk boundaries, then the call is aborted', async () => {
  // "\n\n" arrives split over two SSE events (and two TCP writes); the upstream would keep going.
  upstream.reply({ chunks: anthropicMessages.events(answerOf(['Line one.\n', '\nLine two', ' and more'])).slice(0, 5), delayMs: 5, hang: true });
  const generation = request({ model, stop: ['\n\n', 'STOP'] });
  assert.deepEqual(adapter.prepare(generation, modelOf(adapter, model)).emulated, ['stop']);
  const parts = await collect(adapter, generation);
  assert.deepEqual(upstream.requests[0].body.stop_sequences, ['STOP'], 'the vendor still gets the stops it accepts');
  assert.equal(textOf(parts), 'Line one.');
  assert.deepEqual(finishes(parts), { 0: 'stop' });
  assert.equal(await upstream.requests[0].closedEarly, true, 'upstream call aborted once stopped');
  const [usage] = usages(parts);
  assert.equal(usage.promptTokens, 55, 'prompt tokens from message_start');
  assert.ok(usage.completionTokens >= 1);
});

test('stop split inside one event text and the next is caught too', async () => {
  upstream.reply(anthropicMessages.stream(answerOf(['abc EN', 'D tail'])));
  const parts = await collect(adapter, request({ model, stop: ['END', ' '] }));
  assert.equal(textOf(parts), 'abc');
});

test('prompt list fans out to independent concurrent calls; n emulated; one usage per call', async () => {
  upstream.always({ answer: (recorded) => anthropicMessages.stream(answerOf([`<${recorded.body.messages[0].content}>`])) });
  const generation = request({ model, prompt: ['first', 'second'], n: 2 });
  assert.deepEqual(adapter.prepare(generation, modelOf(adapter, model)).emulated, ['prompt', 'n']);
  const parts = await collect(adapter, generation);
  assert.equal(upstream.requests.length, 4);
  for (const sent of upstream.requests) assert.equal(sent.body.messages.length, 1, 'never one multi-message chat');
  assert.deepEqual(
    [0, 1, 2, 3].map((choice) => textOf(parts, choice)),
    ['<first>', '<first>', '<second>', '<second>'],
  );
  assert.equal(usages(parts).length, 4);
});

test('echo without logprobs prepends the prompt', async () => {
  upstream.reply(anthropicMessages.stream(answerOf([' world'])));
  const parts = await collect(adapter, request({ model, prompt: 'Hello', echo: true }));
  assert.equal(textOf(parts), 'Hello world');
});

test('refusals name the parameter and the vendor; nothing is clamped', () => {
  const info = modelOf(adapter, model);
  const cases: Array<[Partial<GenerationRequest>, string]> = [
    [{ logprobs: 1 }, 'logprobs'],
    [{ logitBias: { '5': 1 } }, 'logit_bias'],
    [{ echo: true, logprobs: 0 }, 'logprobs'],
    [{ temperature: 1.5 }, 'temperature'],
    [{ seed: 1 }, 'seed'],
    [{ bestOf: 3, n: 1 }, 'best_of'],
    [{ suffix: 'x' }, 'suffix'],
    [{ presencePenalty: 0.3 }, 'presence_penalty'],
    [{ frequencyPenalty: 1 }, 'frequency_penalty'],
  ];
  for (const [overrides, param] of cases) {
    assert.throws(
      () => adapter.prepare(request({ model, ...overrides }), info),
      (error: any) => error.status === 400 && error.param === param && error.message.includes("'anthropic'") && error.message.includes(`'${param}'`),
      param,
    );
  }
  assert.doesNotThrow(() => adapter.prepare(request({ model, temperature: 1 }), info));
});

test('errors before output map by status; the key never leaks', async () => {
  const cases: Array<[number, string, number, string]> = [
    [400, 'messages: text content blocks must be non-empty', 400, 'upstream_invalid_request'],
    [401, `invalid x-api-key ${key}`, 502, 'upstream_auth_failed'],
    [404, 'model: claude-nope', 404, 'model_not_found'],
  ];
  for (const [status, message, expected, code] of cases) {
    upstream.reset();
    upstream.reply(anthropicMessages.error(status, message));
    const { error } = await collectUntilError(adapter, request({ model }));
    assert.ok(error instanceof VendorError);
    assert.deepEqual([error.status, error.code], [expected, code]);
    assert.ok(!error.message.includes(key));
    assert.match(error.message, /anthropic/);
    assert.equal(upstream.requests.length, 1, 'client errors are not retried');
  }
});

test('a spent balance or spend limit → 502 upstream_quota_exhausted, final, never retried', async () => {
  const cases: Array<[string, number]> = [
    ['anthropic/error-enforced-spend-limit.json', 429],
    ['anthropic/error-credit-balance-too-low.json', 400],
    ['anthropic/error-billing.json', 402],
  ];
  for (const [name, status] of cases) {
    upstream.reset();
    upstream.always(fixture(name, { status }));
    const { error } = await collectUntilError(adapter, request({ model }));
    assert.ok(error instanceof VendorError, name);
    assert.deepEqual([error.status, error.code, error.retryable], [502, 'upstream_quota_exhausted', false], name);
    assert.match(error.message, /'anthropic'/);
    assert.equal(upstream.requests.length, 1, `${name}: retrying cannot restore a spent balance`);
  }
});

test('504 timeout_error is a timeout: 504 upstream_timeout, retried, then succeeds', async () => {
  upstream.reply(fixture('anthropic/error-timeout.json', { status: 504 }), anthropicMessages.stream(answerOf(['ok'])));
  assert.equal(textOf(await collect(adapter, request({ model }))), 'ok');
  assert.equal(upstream.requests.length, 2);

  upstream.reset();
  upstream.always(fixture('anthropic/error-timeout.json', { status: 504 }));
  const { error } = await collectUntilError(adapter, request({ model }));
  assert.deepEqual([error.status, error.code, error.retryable], [504, 'upstream_timeout', true]);
});

test('error events name their status: billing_error mid-stream is final, timeout_error a 504', async () => {
  const failingStream = (type: string, message: string) => ({
    chunks: [...anthropicMessages.events(answerOf([])).slice(0, 3), sse({ type: 'error', error: { type, message } }, 'error')],
  });
  upstream.always(failingStream('billing_error', 'billing problem'));
  let { error } = await collectUntilError(adapter, request({ model }));
  assert.deepEqual([error.status, error.code, error.retryable], [502, 'upstream_quota_exhausted', false]);
  assert.equal(upstream.requests.length, 1);

  upstream.reset();
  upstream.always(failingStream('timeout_error', 'Request timed out'));
  ({ error } = await collectUntilError(adapter, request({ model })));
  assert.deepEqual([error.status, error.code], [504, 'upstream_timeout']);
});

test('529 overloaded is retried, then succeeds', async () => {
  upstream.reply(anthropicMessages.error(529, 'Overloaded'), anthropicMessages.stream(answerOf(['ok'])));
  const parts = await collect(adapter, request({ model }));
  assert.equal(upstream.requests.length, 2);
  assert.equal(textOf(parts), 'ok');
});

test('error event before output is retried; error event after output is thrown, not retried', async () => {
  upstream.reply(fixture('anthropic/stream-overloaded-before-output.sse'), anthropicMessages.stream(answerOf(['fine'])));
  assert.equal(textOf(await collect(adapter, request({ model }))), 'fine');
  assert.equal(upstream.requests.length, 2);

  upstream.reset();
  upstream.reply(fixture('anthropic/stream-overloaded-after-output.sse'));
  const { parts, error } = await collectUntilError(adapter, request({ model }));
  assert.equal(textOf(parts), 'partial');
  assert.ok(error instanceof VendorError);
  assert.equal(error.status, 502);
  assert.match(error.message, /anthropic.*Overloaded/);
  assert.equal(upstream.requests.length, 1);
});

test('broken event → 502 VendorError', async () => {
  upstream.reply(fixture('anthropic/stream-broken.sse'));
  const { error } = await collectUntilError(adapter, request({ model }));
  assert.deepEqual([error.status, error.code], [502, 'upstream_malformed']);
});

test('client abort: the upstream sees the connection close', async () => {
  upstream.reply(anthropicMessages.hangAfterOutput('one', billed));
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

test('catalogue and enabling', () => {
  assert.ok(adapter.listModels().every((info) => info.vendor === 'anthropic' && !info.capabilities.nativeCompletions && !info.exactTokenizer));
  assert.equal(modelOf(adapter, 'claude-future-9').contextWindow, 131072);
  assert.match(createAnthropicAdapter(testConfig({})) as string, /ANTHROPIC_API_KEY/);
});

test('fan-out: one call failing aborts its siblings (no call outlives the request)', async () => {
  // The good call gets its message_start, then waits for ever.
  upstream.always({
    answer: (recorded) =>
      recorded.body.messages[0].content === 'bad'
        ? anthropicMessages.error(400, 'bad prompt')
        : { chunks: anthropicMessages.events(answerOf([])).slice(0, 1), hang: true },
  });
  const { error } = await collectUntilError(adapter, request({ model, prompt: ['good', 'bad'] }));
  assert.equal(error.status, 400);
  const sibling = upstream.requests.find((sent) => sent.body.messages[0].content === 'good');
  assert.equal(await sibling!.closedEarly, true);
});
