/** OpenAI-compatible presets and operator-declared servers against a mock OpenAI-wire upstream. */
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { ConfigError } from '../src/config/config.js';
import { createOpenAIAdapter } from '../src/vendors/openai/openai-adapter.js';
import { createOpenAICompatibleAdapters } from '../src/vendors/openai-compatible/create-openai-compatible-adapters.js';
import type { GenerationRequest, VendorAdapter } from '../src/vendors/types.js';
import { MockUpstream } from './support/mock-upstream.js';
import { collect, collectUntilError, fastTransport, finishes, modelOf, request, testConfig, textOf, usages } from './support/mock-upstream-helpers.js';
import { fixture } from './support/vendor-fixtures.js';
import { openaiChat, openaiCompletions } from './support/vendor-wire.js';

let upstream: MockUpstream;
const opened: VendorAdapter[] = [];

function build(vendorEnv: Record<string, string>, vendors: Record<string, Record<string, unknown>> = {}) {
  const created = createOpenAICompatibleAdapters(testConfig(vendorEnv, vendors), new Set(['anthropic', 'gemini', 'local']));
  opened.push(...created.adapters);
  return created;
}

function only(vendorEnv: Record<string, string>, name: string, vendors: Record<string, Record<string, unknown>> = {}): VendorAdapter {
  const adapter = build(vendorEnv, { [name]: fastTransport, ...vendors }).adapters.find((candidate) => candidate.name === name);
  if (!adapter) throw new Error(`${name} not offered`);
  return adapter;
}

const billed = { prompt: 2, completion: 1 };

before(async () => {
  upstream = await MockUpstream.start();
});
beforeEach(() => upstream.reset());
after(async () => {
  await Promise.all(opened.map((adapter) => adapter.close?.()));
  await upstream.close();
});

test('which vendors are offered: keyed presets need their key, keyless servers their base URL', () => {
  const { adapters, disabled } = build({ TOGETHER_API_KEY: 'tg', VLLM_BASE_URL: upstream.url });
  const names = adapters.map((adapter) => adapter.name);
  assert.ok(names.includes('together'));
  assert.ok(names.includes('vllm'));
  assert.ok(!names.includes('groq'));
  assert.match(disabled.get('groq')!, /GROQ_API_KEY/);
  assert.match(disabled.get('ollama')!, /OLLAMA_BASE_URL/);
  assert.match(disabled.get('azure')!, /AZURE_OPENAI_API_KEY and AZURE_OPENAI_BASE_URL/);
  // OpenAI is a preset built by its own folder, not in this list; it gives the same kind of hint.
  assert.equal(disabled.has('openai'), false);
  assert.match(createOpenAIAdapter(testConfig({ TOGETHER_API_KEY: 'tg', VLLM_BASE_URL: upstream.url })) as string, /OPENAI_API_KEY/);
});

test('azure: deployment URL with api-version, api-key header, no model in the body', async () => {
  const adapter = only({ AZURE_OPENAI_API_KEY: 'az-key', AZURE_OPENAI_BASE_URL: upstream.url, AZURE_OPENAI_API_VERSION: '2024-06-01' }, 'azure');
  upstream.reply(openaiCompletions.stream({ texts: ['ok'], usage: billed }));
  const parts = await collect(adapter, request({ model: 'my-instruct', prompt: 'Hi', n: 2, logprobs: 1 }));
  const sent = upstream.requests[0];
  assert.equal(sent.url, '/openai/deployments/my-instruct/completions?api-version=2024-06-01');
  assert.equal(sent.headers['api-key'], 'az-key');
  assert.equal(sent.headers.authorization, undefined);
  assert.deepEqual(sent.body, { prompt: 'Hi', max_tokens: 16, n: 2, logprobs: 1, stream: true, stream_options: { include_usage: true } });
  assert.equal(textOf(parts), 'ok');
});

test('azure: chat deployments declared in config use chat/completions', async () => {
  const adapter = only({ AZURE_OPENAI_API_KEY: 'az-key', AZURE_OPENAI_BASE_URL: upstream.url }, 'azure', {
    azure: { ...fastTransport, models: [{ name: 'gpt4o-prod', completions: 'chat', contextWindow: 128000 }] },
  });
  upstream.reply(openaiChat.json({ texts: ['hey'], usage: { prompt: 1, completion: 1 } }));
  const parts = await collect(adapter, request({ model: 'gpt4o-prod', stream: false }));
  assert.equal(upstream.requests[0].url, '/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21');
  assert.equal(textOf(parts), 'hey');
  assert.equal(modelOf(adapter, 'gpt4o-prod').contextWindow, 128000);
});

test('ollama: keyless; prompt list fans out to independent calls, n emulated, echo prepended', async () => {
  const adapter = only({ OLLAMA_BASE_URL: upstream.url }, 'ollama');
  upstream.always({ answer: (recorded) => openaiCompletions.stream({ texts: [`[${recorded.body.prompt}|${recorded.body.seed}]`], usage: billed }) });
  const generation = request({ model: 'llama3.2', prompt: ['A', 'B'], n: 2, echo: true, seed: 7 });
  assert.deepEqual(adapter.prepare(generation, modelOf(adapter, 'llama3.2')).emulated, ['prompt', 'n', 'echo']);
  const parts = await collect(adapter, generation);
  assert.equal(upstream.requests.length, 4);
  for (const sent of upstream.requests) {
    assert.equal(sent.headers.authorization, undefined);
    assert.equal(typeof sent.body.prompt, 'string', 'each prompt is its own call');
    assert.equal(sent.body.n, undefined);
    assert.equal(sent.body.echo, undefined);
  }
  assert.equal(textOf(parts, 0), 'A[A|7]');
  assert.equal(textOf(parts, 1), 'A[A|8]');
  assert.equal(textOf(parts, 2), 'B[B|7]');
  assert.equal(textOf(parts, 3), 'B[B|8]');
  assert.deepEqual(finishes(parts), { 0: 'stop', 1: 'stop', 2: 'stop', 3: 'stop' });
  assert.equal(usages(parts).length, 4, 'one usage part per upstream call');
});

test('ollama: refuses what it cannot honour, naming param and vendor', () => {
  const adapter = only({ OLLAMA_BASE_URL: upstream.url }, 'ollama');
  const model = modelOf(adapter, 'llama3.2');
  const cases: Array<[Partial<GenerationRequest>, string]> = [
    [{ bestOf: 3 }, 'best_of'],
    [{ logitBias: { '1': 5 } }, 'logit_bias'],
    [{ logprobs: 2 }, 'logprobs'],
    [{ user: 'u' }, 'user'],
    [{ echo: true, logprobs: 1 }, 'logprobs'],
    [{ prompts: [{ kind: 'tokens', tokens: [1, 2] }] }, 'prompt'],
  ];
  for (const [overrides, param] of cases) {
    assert.throws(
      () => adapter.prepare(request({ model: 'llama3.2', ...overrides }), model),
      (error: any) => error.status === 400 && error.param === param && error.code === 'unsupported_parameter' && /'ollama'/.test(error.message),
    );
  }
  // No-op values are not refused.
  assert.doesNotThrow(() => adapter.prepare(request({ model: 'llama3.2', bestOf: 1, logitBias: {}, presencePenalty: 0 }), model));
});

test('vllm: max_tokens 0 is answered by the gateway with no call; with logprobs or an echoed token prompt it is refused by name', async () => {
  const adapter = only({ VLLM_BASE_URL: upstream.url }, 'vllm');
  const model = modelOf(adapter, 'meta-llama/Llama-3.1-8B');
  const generation = request({ model: 'meta-llama/Llama-3.1-8B', prompt: ['Hi', 'there'], maxTokens: 0, echo: true, stream: false });
  assert.deepEqual(adapter.prepare(generation, model).emulated, ['max_tokens', 'echo']);
  const parts = await collect(adapter, generation);
  assert.equal(upstream.requests.length, 0);
  assert.deepEqual([textOf(parts, 0), textOf(parts, 1)], ['Hi', 'there']);
  assert.deepEqual(finishes(parts), { 0: 'length', 1: 'length' });
  assert.deepEqual(
    usages(parts).map((usage) => [usage.promptTokens, usage.completionTokens, usage.estimated]),
    [[0, 0, false]],
  );
  const refused: Partial<GenerationRequest>[] = [{ logprobs: 1 }, { echo: true, prompts: [{ kind: 'tokens', tokens: [1, 2] }] }];
  for (const overrides of refused) {
    assert.throws(
      () => adapter.prepare(request({ model: 'meta-llama/Llama-3.1-8B', maxTokens: 0, ...overrides }), model),
      (error: any) => error.status === 400 && error.param === 'max_tokens' && /'vllm'/.test(error.message),
    );
  }
});

test('vllm: optional key sent as bearer; token prompts and prompt lists native', async () => {
  const adapter = only({ VLLM_BASE_URL: upstream.url, VLLM_API_KEY: 'vk' }, 'vllm');
  upstream.reply(fixture('vllm/completion-token-prompts.json'));
  const parts = await collect(
    adapter,
    request({
      model: 'meta-llama/Llama-3.1-8B',
      prompts: [
        { kind: 'tokens', tokens: [1, 2] },
        { kind: 'tokens', tokens: [3] },
      ],
      stream: false,
    }),
  );
  assert.equal(upstream.requests.length, 1);
  assert.equal(upstream.requests[0].headers.authorization, 'Bearer vk');
  assert.deepEqual(upstream.requests[0].body.prompt, [[1, 2], [3]]);
  assert.deepEqual(finishes(parts), { 0: 'length', 1: 'stop' });
});

test('vllm: an answer its engine aborted is a retryable 502 before output, never a finished choice', async () => {
  const adapter = only({ VLLM_BASE_URL: upstream.url }, 'vllm');
  upstream.always(openaiCompletions.json({ texts: ['Half an ans'], usage: billed, finishReasons: ['abort'] }));
  const whole = await collectUntilError(adapter, request({ model: 'meta-llama/Llama-3.1-8B', stream: false }));
  assert.deepEqual([whole.error?.status, whole.error?.code, whole.error?.retryable], [502, 'upstream_error', true]);
  assert.match(whole.error.message, /'vllm' vendor reported an error: it aborted the answer/);
  assert.equal(finishes(whole.parts)[0], undefined);
});

test('groq: chat-only preset, n emulated with parallel chat calls, usage from x_groq', async () => {
  const adapter = only({ GROQ_API_KEY: 'gk', GROQ_BASE_URL: upstream.url }, 'groq');
  upstream.always(fixture('groq/chat-stream-x-groq-usage.sse'));
  const parts = await collect(adapter, request({ model: 'llama-3.3-70b-versatile', n: 3, stop: ['.'] }));
  assert.equal(upstream.requests.length, 3);
  const sent = upstream.requests[0];
  assert.equal(sent.url, '/v1/chat/completions');
  assert.equal(sent.headers.authorization, 'Bearer gk');
  assert.deepEqual(sent.body, {
    model: 'llama-3.3-70b-versatile',
    messages: [{ role: 'user', content: 'Say hi' }],
    max_tokens: 16,
    stop: ['.'],
    stream: true,
    stream_options: { include_usage: true },
  });
  assert.deepEqual([textOf(parts, 0), textOf(parts, 1), textOf(parts, 2)], ['hi', 'hi', 'hi']);
  assert.deepEqual(
    usages(parts).map((usage) => usage.promptTokens),
    [4, 4, 4],
  );
});

test('mistral: seed is random_seed, no stream_options (usage arrives unasked)', async () => {
  const adapter = only({ MISTRAL_API_KEY: 'mk', MISTRAL_BASE_URL: upstream.url }, 'mistral');
  upstream.reply(fixture('mistral/chat-stream.sse'));
  const parts = await collect(adapter, request({ model: 'mistral-small-latest', seed: 3 }));
  assert.equal(upstream.requests[0].body.random_seed, 3);
  assert.equal(upstream.requests[0].body.seed, undefined);
  assert.equal(upstream.requests[0].body.stream_options, undefined);
  assert.equal(usages(parts)[0].completionTokens, 1);
});

test('deepseek: chat path without /v1, cache hits reported as cached tokens', async () => {
  const adapter = only({ DEEPSEEK_API_KEY: 'dk', DEEPSEEK_BASE_URL: upstream.url }, 'deepseek');
  upstream.reply(fixture('deepseek/chat-reasoner.json'));
  const parts = await collect(adapter, request({ model: 'deepseek-reasoner', stream: false }));
  assert.equal(upstream.requests[0].url, '/chat/completions');
  assert.deepEqual([usages(parts)[0].cachedTokens, usages(parts)[0].reasoningTokens], [8, 5]);
  assert.deepEqual(finishes(parts), { 0: 'length' });
});

test('deepseek: 402 Insufficient Balance → 502 upstream_quota_exhausted, never retried', async () => {
  const adapter = only({ DEEPSEEK_API_KEY: 'dk', DEEPSEEK_BASE_URL: upstream.url }, 'deepseek');
  upstream.always(fixture('deepseek/error-insufficient-balance.json', { status: 402 }));
  const { error } = await collectUntilError(adapter, request({ model: 'deepseek-chat' }));
  assert.deepEqual([error.status, error.code, error.retryable], [502, 'upstream_quota_exhausted', false]);
  assert.match(error.message, /'deepseek'.*Insufficient Balance/);
  assert.equal(upstream.requests.length, 1);
});

test('operator-declared server: schema, key variable, chat mode, refusals and 400 message passthrough', async () => {
  const vendors = {
    'my-llm': {
      kind: 'openai-compatible',
      baseUrl: upstream.url,
      apiKeyEnv: 'MY_LLM_API_KEY',
      completions: 'chat',
      unsupported: ['seed'],
      models: [{ name: 'house-model', contextWindow: 32768 }],
      ...fastTransport,
    },
  };
  const missing = build({}, vendors);
  assert.match(missing.disabled.get('my-llm')!, /MY_LLM_API_KEY/);
  const adapter = only({ MY_LLM_API_KEY: 'mine' }, 'my-llm', vendors);
  assert.deepEqual(
    adapter.listModels().map((model) => [model.id, model.contextWindow, model.capabilities.nativeCompletions]),
    [['my-llm/house-model', 32768, false]],
  );
  assert.throws(() => adapter.prepare(request({ model: 'house-model', seed: 1 }), modelOf(adapter, 'house-model')), /'my-llm' vendor cannot honour 'seed'/);
  upstream.reply(fixture('vllm/error-prompt-too-long.json', { status: 400 }));
  const { error } = await collectUntilError(adapter, request({ model: 'house-model' }));
  assert.equal(error.status, 400);
  assert.equal(error.message, "The 'my-llm' vendor rejected the request: prompt is too long");
  assert.equal(upstream.requests[0].headers.authorization, 'Bearer mine');
});

test('config errors stop the start with the path: typos, unknown vendors', () => {
  assert.throws(
    () => build({}, { together: { connectTimeout: 5 } }),
    (error: any) => error instanceof ConfigError && /vendors\.together/.test(error.message),
  );
  assert.throws(
    () => build({}, { mystery: { baseUrl: 'http://127.0.0.1:1' } }),
    (error: any) => error instanceof ConfigError && /kind: openai-compatible/.test(error.message),
  );
  assert.throws(() => build({ VLLM_BASE_URL: 'not a url' }), ConfigError);
});

test('unlisted model on a preset: passed through; vendor 404 → 404 model_not_found', async () => {
  const adapter = only({ TOGETHER_API_KEY: 'tk', TOGETHER_BASE_URL: upstream.url }, 'together');
  const model = modelOf(adapter, 'acme/brand-new-model');
  assert.equal(model.exactTokenizer, false);
  upstream.reply(openaiCompletions.error(404, 'Unable to access model acme/brand-new-model'));
  const { error } = await collectUntilError(adapter, request({ model: 'acme/brand-new-model' }));
  assert.equal(error.status, 404);
  assert.equal(error.code, 'model_not_found');
  assert.match(error.message, /together\/acme\/brand-new-model/);
});
