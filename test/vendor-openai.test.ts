/** The `openai` vendor against a mock upstream speaking OpenAI's completions and chat wire formats. */
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { createOpenAIAdapter } from '../src/vendors/openai/openai-adapter.js';
import type { StreamPart, VendorAdapter } from '../src/vendors/types.js';
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
import { fixture, fixtureText } from './support/vendor-fixtures.js';
import { openaiCompletions } from './support/vendor-wire.js';

const key = 'sk-test-secret-key-1234567890';
let upstream: MockUpstream;
let adapter: VendorAdapter;

const billed = { prompt: 5, completion: 7 };

before(async () => {
  upstream = await MockUpstream.start();
  adapter = adapterOf(createOpenAIAdapter(testConfig({ OPENAI_API_KEY: key, OPENAI_BASE_URL: upstream.url }, { openai: fastTransport })));
});
beforeEach(() => upstream.reset());
after(async () => {
  await adapter.close?.();
  await upstream.close();
});

test('non-stream: every parameter passes through to POST /v1/completions, non-stream upstream call', async () => {
  upstream.reply(fixture('openai/completion-n-logprobs.json'));
  const generation = request({
    model: 'gpt-3.5-turbo-instruct',
    prompt: ['Say hi', 'Say yo'],
    n: 2,
    bestOf: 3,
    maxTokens: 5,
    temperature: 0.7,
    topP: 0.9,
    seed: 42,
    stop: ['\n', 'END'],
    presencePenalty: 0.5,
    frequencyPenalty: -0.5,
    logitBias: { '50256': -100 },
    logprobs: 2,
    echo: true,
    suffix: '!',
    user: 'user-1',
    stream: false,
  });
  assert.deepEqual(adapter.prepare(generation, modelOf(adapter, 'gpt-3.5-turbo-instruct')).emulated, []);
  const parts = await collect(adapter, generation);
  assert.equal(upstream.requests.length, 1);
  const sent = upstream.requests[0];
  assert.equal(sent.method, 'POST');
  assert.equal(sent.url, '/v1/completions');
  assert.equal(sent.headers.authorization, `Bearer ${key}`);
  assert.equal(sent.headers['content-type'], 'application/json');
  assert.equal(sent.headers['x-request-id'], 'req_test');
  assert.deepEqual(sent.body, {
    model: 'gpt-3.5-turbo-instruct',
    prompt: ['Say hi', 'Say yo'],
    max_tokens: 5,
    n: 2,
    best_of: 3,
    echo: true,
    logprobs: 2,
    suffix: '!',
    temperature: 0.7,
    top_p: 0.9,
    seed: 42,
    presence_penalty: 0.5,
    frequency_penalty: -0.5,
    logit_bias: { '50256': -100 },
    user: 'user-1',
    stop: ['\n', 'END'],
  });
  assert.deepEqual(parts[0], { type: 'metadata', systemFingerprint: 'fp_1' });
  assert.equal(textOf(parts, 0), ' Hello');
  assert.equal(textOf(parts, 2), ' Hey');
  assert.deepEqual(finishes(parts), { 0: 'stop', 1: 'length', 2: 'content_filter', 3: 'stop' });
  const first = parts.find((part) => part.type === 'text-delta' && part.choice === 0);
  assert.deepEqual(first && first.type === 'text-delta' && first.logprobs, [{ token: ' Hello', logprob: -0.1, topLogprobs: { ' Hello': -0.1, ' Hi': -2.3 } }]);
  assert.deepEqual(usages(parts), [
    {
      promptTokens: 10,
      completionTokens: 4,
      cachedTokens: 0,
      reasoningTokens: null,
      audioPromptTokens: null,
      audioCompletionTokens: null,
      acceptedPredictionTokens: null,
      rejectedPredictionTokens: null,
    },
  ]);
});

test('stream: asks for usage, yields deltas with global choice indexes, finishes and one usage part', async () => {
  upstream.reply(fixture('openai/completion-stream-n.sse'));
  const parts = await collect(adapter, request({ model: 'gpt-3.5-turbo-instruct', prompt: ['a', 'b'], n: 2 }));
  const body = upstream.requests[0].body;
  assert.equal(body.stream, true);
  assert.deepEqual(body.stream_options, { include_usage: true });
  assert.deepEqual(body.prompt, ['a', 'b']);
  assert.equal(body.n, 2);
  assert.equal(textOf(parts, 0), 'Hello');
  assert.equal(textOf(parts, 2), 'Bonjour');
  assert.deepEqual(finishes(parts), { 0: 'stop', 1: 'length', 2: 'stop', 3: 'stop' });
  assert.deepEqual(
    parts.filter((part) => part.type === 'metadata'),
    [{ type: 'metadata', systemFingerprint: 'fp_44709d6fcb' }],
  );
  const [usage] = usages(parts);
  assert.equal(usages(parts).length, 1);
  assert.deepEqual([usage.promptTokens, usage.completionTokens, usage.cachedTokens, usage.reasoningTokens], [5, 7, 2, 3]);
});

test('stream: a character split across network reads arrives whole', async () => {
  const bytes = Buffer.from(fixtureText('openai/completion-stream-unicode.sse'));
  const fox = bytes.indexOf(Buffer.from('🦊'));
  upstream.reply((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write(bytes.subarray(0, fox + 2)); // half of the fox's four bytes
    setTimeout(() => response.end(bytes.subarray(fox + 2)), 20);
  });
  const parts = await collect(adapter, request({ model: 'gpt-3.5-turbo-instruct', stream: true }));
  assert.equal(textOf(parts), 'Zoë saw a 🦊');
});

test('stream: logprobs per delta map to token entries', async () => {
  upstream.reply(fixture('openai/completion-stream-logprobs.sse'));
  const parts = await collect(adapter, request({ model: 'davinci-002', logprobs: 1 }));
  assert.deepEqual(
    parts.find((part) => part.type === 'text-delta'),
    { type: 'text-delta', choice: 0, text: ' a', logprobs: [{ token: ' a', logprob: -1, topLogprobs: { ' a': -1 } }] },
  );
});

const errorCases: Array<{ status: number; message: string; headers?: Record<string, string>; expect: { status: number; code: string } }> = [
  { status: 400, message: "This model's maximum context length is 4097 tokens", expect: { status: 400, code: 'upstream_invalid_request' } },
  { status: 401, message: `Incorrect API key provided: ${key}.`, expect: { status: 502, code: 'upstream_auth_failed' } },
  { status: 403, message: 'Country, region, or territory not supported', expect: { status: 502, code: 'upstream_auth_failed' } },
  { status: 404, message: 'The model `nope` does not exist', expect: { status: 404, code: 'model_not_found' } },
  { status: 429, message: 'Rate limit reached', headers: { 'retry-after': '20' }, expect: { status: 429, code: 'upstream_rate_limited' } },
  { status: 503, message: 'The server is overloaded', expect: { status: 502, code: 'upstream_error' } },
];

for (const errorCase of errorCases) {
  test(`error before output: upstream ${errorCase.status} → ${errorCase.expect.status}`, async () => {
    upstream.always(openaiCompletions.error(errorCase.status, errorCase.message, errorCase.headers));
    const { parts, error } = await collectUntilError(adapter, request({ model: 'gpt-3.5-turbo-instruct' }));
    assert.equal(parts.filter((part) => part.type !== 'usage').length, 0);
    assert.deepEqual(
      usages(parts).map((usage) => [usage.promptTokens, usage.completionTokens, usage.estimated]),
      [[0, 0, false]],
      'refused before output: nothing billed',
    );
    assert.ok(error instanceof VendorError);
    assert.equal(error.status, errorCase.expect.status);
    assert.equal(error.code, errorCase.expect.code);
    assert.match(error.message, /openai/);
    assert.ok(!error.message.includes(key), 'never reveals the vendor key');
    if (errorCase.status === 400) assert.match(error.message, /maximum context length/);
    if (errorCase.status === 401) assert.match(error.message, /OPENAI_API_KEY/);
    if (errorCase.status === 404) assert.equal(error.param, 'model');
    // 429 with retry-after 20 s > maxRetryAfterMs: handed to the client at once, with the header.
    if (errorCase.status === 429) {
      assert.equal(error.headers['retry-after'], '20');
      assert.equal(upstream.requests.length, 1);
    }
    const retried = errorCase.status === 503 ? 3 : 1;
    assert.equal(upstream.requests.length, retried);
  });
}

test('quota exhausted: a 429 insufficient_quota (any billing code) → 502 upstream_quota_exhausted, final, never retried', async () => {
  for (const name of ['openai/error-insufficient-quota.json', 'openai/error-project-spend-limit.json']) {
    upstream.reset();
    upstream.always(fixture(name, { status: 429 }));
    const { error } = await collectUntilError(adapter, request({ model: 'gpt-3.5-turbo-instruct' }));
    assert.ok(error instanceof VendorError, name);
    assert.deepEqual([error.status, error.code, error.type, error.retryable], [502, 'upstream_quota_exhausted', 'upstream_error', false], name);
    assert.match(error.message, /'openai'.*exceeded your current quota/);
    assert.equal(upstream.requests.length, 1, `${name}: waiting cannot restore a spent balance`);
  }
});

test('a 504 from the vendor is a timeout: 504 upstream_timeout, retried', async () => {
  upstream.reply(
    openaiCompletions.error(504, 'Gateway timeout'),
    openaiCompletions.error(504, 'Gateway timeout'),
    openaiCompletions.error(504, 'Gateway timeout'),
  );
  const { error } = await collectUntilError(adapter, request({ model: 'gpt-3.5-turbo-instruct' }));
  assert.deepEqual([error.status, error.code, error.type, error.retryable], [504, 'upstream_timeout', 'timeout_error', true]);
  assert.match(error.message, /'openai' vendor timed out/);
  assert.equal(upstream.requests.length, 3);
});

test('timeout before output → 504 after retries', async () => {
  upstream.always({ hang: true });
  const started = Date.now();
  const single = adapterOf(
    createOpenAIAdapter(
      testConfig(
        { OPENAI_API_KEY: key, OPENAI_BASE_URL: upstream.url },
        { openai: { ...fastTransport, idleTimeoutMs: 150, responseTimeoutMs: 150, maxRetries: 0 } },
      ),
    ),
  );
  const { error } = await collectUntilError(single, request({ model: 'gpt-3.5-turbo-instruct' }));
  await single.close?.();
  assert.equal(error.status, 504);
  assert.equal(error.code, 'upstream_timeout');
  assert.ok(Date.now() - started < 2_000);
});

test('connection refused → 502 naming the vendor', async () => {
  const closed = await MockUpstream.start();
  const url = closed.url;
  await closed.close();
  const refused = adapterOf(createOpenAIAdapter(testConfig({ OPENAI_API_KEY: key, OPENAI_BASE_URL: url }, { openai: { ...fastTransport, maxRetries: 1 } })));
  const { error } = await collectUntilError(refused, request({ model: 'gpt-3.5-turbo-instruct' }));
  await refused.close?.();
  assert.equal(error.status, 502);
  assert.equal(error.code, 'upstream_unreachable');
  assert.match(error.message, /'openai'.*connection refused/);
});

test('retry then success: 503 then 200, no duplicate output', async () => {
  upstream.reply(openaiCompletions.error(503, 'overloaded'), openaiCompletions.stream({ texts: ['ok'], usage: billed }));
  const parts = await collect(adapter, request({ model: 'gpt-3.5-turbo-instruct' }));
  assert.equal(upstream.requests.length, 2);
  assert.equal(textOf(parts), 'ok');
});

test('retry honours retry-after', async () => {
  upstream.reply(openaiCompletions.error(429, 'slow down', { 'retry-after': '1' }), openaiCompletions.stream({ texts: ['ok'], usage: null }));
  const started = Date.now();
  const parts = await collect(adapter, request({ model: 'gpt-3.5-turbo-instruct' }));
  assert.ok(Date.now() - started >= 950, 'waited the second retry-after asked for');
  assert.equal(textOf(parts), 'ok');
});

test('error after output: thrown from the iterator as VendorError, never retried', async () => {
  upstream.reply(openaiCompletions.breakAfterOutput('partial', billed));
  const { parts, error } = await collectUntilError(adapter, request({ model: 'gpt-3.5-turbo-instruct' }));
  assert.equal(textOf(parts), 'partial');
  assert.ok(error instanceof VendorError);
  assert.equal(error.status, 502);
  assert.equal(upstream.requests.length, 1);
});

test('error chunk inside the stream after output → VendorError', async () => {
  upstream.reply(fixture('openai/completion-stream-error-after-output.sse'));
  const { error } = await collectUntilError(adapter, request({ model: 'gpt-3.5-turbo-instruct' }));
  assert.match(error.message, /openai.*server had an error/);
  assert.equal(upstream.requests.length, 1);
});

test('broken chunk → 502 VendorError, not a crash', async () => {
  upstream.reply(fixture('openai/completion-stream-broken.sse'));
  const { parts, error } = await collectUntilError(adapter, request({ model: 'gpt-3.5-turbo-instruct' }));
  assert.equal(textOf(parts), 'fine');
  assert.ok(error instanceof VendorError);
  assert.equal(error.status, 502);
  assert.equal(error.code, 'upstream_malformed');
});

test('stream truncated before every choice finished → 502', async () => {
  upstream.reply(fixture('openai/completion-stream-truncated.sse'));
  const { error } = await collectUntilError(adapter, request({ model: 'gpt-3.5-turbo-instruct' }));
  assert.equal(error.status, 502);
});

test('client abort on a stream: upstream sees the connection close', async () => {
  upstream.reply(openaiCompletions.hangAfterOutput('first', billed));
  const controller = new AbortController();
  const iterator = adapter
    .stream(request({ model: 'gpt-3.5-turbo-instruct' }), modelOf(adapter, 'gpt-3.5-turbo-instruct'), {
      signal: controller.signal,
      requestId: 'r',
      reportUsage: () => {},
    })
    [Symbol.asyncIterator]();
  const first = await iterator.next();
  assert.deepEqual(
    first.value?.map((part: StreamPart) => part.type),
    ['metadata', 'text-delta'],
  );
  const pending = iterator.next();
  controller.abort();
  await assert.rejects(pending, (error: any) => error.name === 'AbortError' && !(error instanceof VendorError));
  assert.equal(await upstream.requests[0].closedEarly, true);
});

test('client abort on a non-stream call: upstream sees the connection close', async () => {
  upstream.reply({ hang: true });
  const controller = new AbortController();
  const result = collect(adapter, request({ model: 'gpt-3.5-turbo-instruct', stream: false }), controller.signal);
  while (upstream.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  controller.abort();
  await assert.rejects(result, (error: any) => error.name === 'AbortError');
  assert.equal(await upstream.requests[0].closedEarly, true);
});

test('chat-only model (gpt-4o): /v1/chat/completions, one conversation per prompt, echo prepended', async () => {
  upstream.reply(fixture('openai/chat-stream.sse'));
  const generation = request({ model: 'gpt-4o', prompt: 'Hi', echo: true, maxTokens: 7, stop: ['\n'] });
  assert.deepEqual(adapter.prepare(generation, modelOf(adapter, 'gpt-4o')).emulated, ['echo']);
  const parts = await collect(adapter, generation);
  const sent = upstream.requests[0];
  assert.equal(sent.url, '/v1/chat/completions');
  assert.deepEqual(sent.body, {
    model: 'gpt-4o',
    messages: [{ role: 'user', content: 'Hi' }],
    max_completion_tokens: 7,
    stop: ['\n'],
    stream: true,
    stream_options: { include_usage: true },
  });
  assert.equal(textOf(parts), 'Hi there');
  assert.equal(usages(parts)[0].promptTokens, 3);
});

test('chat-only model refuses logprobs, suffix and best_of naming param and vendor', () => {
  const model = modelOf(adapter, 'gpt-4o');
  for (const [overrides, param] of [
    [{ logprobs: 1 }, 'logprobs'],
    [{ suffix: 'x' }, 'suffix'],
    [{ bestOf: 2 }, 'best_of'],
  ] as const) {
    assert.throws(
      () => adapter.prepare(request({ model: 'gpt-4o', ...overrides }), model),
      (error: any) => error.status === 400 && error.param === param && /'openai'/.test(error.message) && error.message.includes(param),
    );
  }
});

test('catalogue: listed models with honest tokenizers; unlisted names pass through; no key → not offered', () => {
  const instruct = modelOf(adapter, 'gpt-3.5-turbo-instruct');
  assert.equal(instruct.id, 'openai/gpt-3.5-turbo-instruct');
  assert.equal(instruct.exactTokenizer, true);
  assert.equal(instruct.capabilities.nativeCompletions, true);
  assert.equal(modelOf(adapter, 'gpt-4o').exactTokenizer, true);
  assert.ok(modelOf(adapter, 'gpt-4o').countTokens('hello world') > 0);
  const unlisted = modelOf(adapter, 'ft:davinci-002:acme::abc123');
  assert.equal(unlisted.capabilities.nativeCompletions, true);
  assert.equal(adapter.resolveModel('bad name with spaces'), null);
  assert.ok(adapter.listModels().some((model) => model.name === 'gpt-4o'));
  const hint = createOpenAIAdapter(testConfig({}));
  assert.equal(typeof hint, 'string');
  assert.match(hint as string, /OPENAI_API_KEY/);
});

test('SDK-style base URL ending in /v1 is not doubled', async () => {
  const sdkStyle = adapterOf(createOpenAIAdapter(testConfig({ OPENAI_API_KEY: key, OPENAI_BASE_URL: `${upstream.url}/v1` }, { openai: fastTransport })));
  upstream.reply(openaiCompletions.json({ texts: ['x'], usage: null }));
  await collect(sdkStyle, request({ model: 'davinci-002', stream: false }));
  await sdkStyle.close?.();
  assert.equal(upstream.requests[0].url, '/v1/completions');
});

test('keep-alive: consecutive calls (stream and non-stream) reuse one pooled connection', async () => {
  upstream.reply(
    openaiCompletions.stream({ texts: ['a'], usage: billed }),
    openaiCompletions.json({ texts: ['b'], usage: null }),
    openaiCompletions.stream({ texts: ['c'], usage: null }),
  );
  const fresh = adapterOf(createOpenAIAdapter(testConfig({ OPENAI_API_KEY: key, OPENAI_BASE_URL: upstream.url }, { openai: fastTransport })));
  // undici hands a finished connection back to its pool a tick later; a short pause lets it.
  const pause = () => new Promise((resolve) => setTimeout(resolve, 20));
  await collect(fresh, request({ model: 'davinci-002' }));
  await pause();
  await collect(fresh, request({ model: 'davinci-002', stream: false }));
  await pause();
  await collect(fresh, request({ model: 'davinci-002' }));
  await fresh.close?.();
  const ports = upstream.requests.map((sent) => sent.remotePort);
  assert.equal(new Set(ports).size, 1, `one socket for all three calls, got ${ports.join(',')}`);
});
