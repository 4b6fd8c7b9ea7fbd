/**
 * Vendors through the whole gateway: what a vendor cannot take never goes upstream. `max_tokens: 0`
 * on chat-only vendors is answered by the gateway (no call, empty choices, zero usage, exact);
 * seeds reach each vendor inside its range, one per emulated choice; ranges a vendor lacks are
 * refused by name before any call.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { completionsBody, withSeed } from '../src/vendors/openai-compatible/openai-compatible-bodies.js';
import fc from 'fast-check';
import { planOpenAICompatible } from '../src/vendors/openai-compatible/openai-compatible-plan.js';
import { int32SeedRange, int64SeedRange, nonNegativeInt32SeedRange, seedInRange } from '../src/vendors/shared/seed-range.js';
import { openaiPreset } from '../src/vendors/openai/openai-adapter.js';
import { MockUpstream } from './support/mock-upstream.js';
import { request } from './support/mock-upstream-helpers.js';
import { parseSse, post, startTestGateway, type TestGateway } from './support/test-gateway.js';
import { anthropicMessages, geminiGenerateContent, openaiChat, openaiCompletions } from './support/vendor-wire.js';

const KEY = 'sk-upstream-secret-654321';
const transport = { connectTimeoutMs: 1000, idleTimeoutMs: 1500, responseTimeoutMs: 2000, maxRetries: 0, retryBaseDelayMs: 5, retryMaxDelayMs: 20 };
const dir = mkdtempSync(join(tmpdir(), 'tollgate-emulate-'));
let gateway: TestGateway;
const mocks: Record<'openai' | 'anthropic' | 'gemini' | 'groq' | 'mistral', MockUpstream> = {} as never;

/** Every mock answers with the seed it received as the text, so each choice shows its own seed. */
function answerWithSeed(vendor: keyof typeof mocks): void {
  mocks[vendor].always({
    answer: (recorded) => {
      const body = recorded.body;
      const seed = String(body.seed ?? body.random_seed ?? body.generationConfig?.seed ?? '-');
      const wire =
        vendor === 'anthropic' ? anthropicMessages : vendor === 'gemini' ? geminiGenerateContent : 'messages' in body ? openaiChat : openaiCompletions;
      return wire.json({ texts: Array.from({ length: body.n ?? 1 }, () => seed), usage: { prompt: 3, completion: 1 } });
    },
  });
}

before(async () => {
  for (const vendor of ['openai', 'anthropic', 'gemini', 'groq', 'mistral'] as const) mocks[vendor] = await MockUpstream.start();
  const configPath = join(dir, 'tollgate.yaml');
  writeFileSync(configPath, JSON.stringify({ vendors: { openai: transport, anthropic: transport, gemini: transport, groq: transport, mistral: transport } }));
  gateway = await startTestGateway({
    OPENAI_API_KEY: KEY,
    OPENAI_BASE_URL: mocks.openai.url,
    ANTHROPIC_API_KEY: KEY,
    ANTHROPIC_BASE_URL: mocks.anthropic.url,
    GEMINI_API_KEY: KEY,
    GEMINI_BASE_URL: mocks.gemini.url,
    GROQ_API_KEY: KEY,
    GROQ_BASE_URL: mocks.groq.url,
    MISTRAL_API_KEY: KEY,
    MISTRAL_BASE_URL: mocks.mistral.url,
    TOLLGATE_CONFIG: configPath,
  });
});
after(async () => {
  await gateway.stop();
  await Promise.all(Object.values(mocks).map((mock) => mock.close()));
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  for (const vendor of Object.keys(mocks) as (keyof typeof mocks)[]) {
    mocks[vendor].reset();
    answerWithSeed(vendor);
  }
});

function upstreamCalls(): number {
  return Object.values(mocks).reduce((sum, mock) => sum + mock.requests.length, 0);
}

/** The ledger row of a completion, polled a bounded number of times (the write settles after the reply). */
async function ledgerRow(id: string) {
  for (let attempt = 0; attempt < 50; attempt++) {
    const record = await gateway.server.storage.getUsageRecord(id);
    if (record) return record;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no ledger row for ${id}`);
}

interface Answer {
  id: string;
  texts: string[];
  finishes: (string | null)[];
  usage: { prompt_tokens: number; completion_tokens: number };
  emulated: string;
}

/** Sends a request and reads texts, finish reasons and usage from the JSON or the stream. */
async function complete(body: Record<string, unknown>): Promise<Answer> {
  const stream = body.stream === true;
  const response = await post(gateway, '/v5/completions', stream ? { ...body, stream_options: { include_usage: true } } : body);
  assert.equal(response.status, 200, response.text);
  const emulated = response.headers.get('x-tollgate-emulated') ?? '';
  if (!stream) {
    const choices: { index: number; text: string; finish_reason: string }[] = response.body.choices;
    return {
      id: response.body.id,
      texts: choices.map((choice) => choice.text),
      finishes: choices.map((choice) => choice.finish_reason),
      usage: response.body.usage,
      emulated,
    };
  }
  const chunks = parseSse(response.text)
    .filter((event) => event.event === null && event.data !== '[DONE]')
    .map((event) => JSON.parse(event.data));
  const texts: string[] = [];
  const finishes: (string | null)[] = [];
  for (const chunk of chunks) {
    for (const choice of chunk.choices) {
      texts[choice.index] = (texts[choice.index] ?? '') + choice.text;
      if (choice.finish_reason) finishes[choice.index] = choice.finish_reason;
    }
  }
  return { id: chunks[0].id, texts, finishes, usage: chunks.at(-1).usage, emulated };
}

const chatOnlyModels = ['anthropic/claude-sonnet-4-5', 'gemini/gemini-2.5-flash', 'openai/gpt-4o', 'groq/llama-3.1-8b-instant'];

describe('max_tokens 0 on chat-only vendors', () => {
  for (const model of chatOnlyModels) {
    for (const stream of [false, true]) {
      for (const echo of [false, true]) {
        test(`${model}, ${stream ? 'stream' : 'JSON'}, echo ${echo}: empty choices, finish length, zero usage, no upstream call`, async () => {
          const answer = await complete({ model, prompt: ['Hi there', ''], n: 2, max_tokens: 0, echo, stream });
          assert.equal(upstreamCalls(), 0, 'no upstream call');
          const expected = echo ? ['Hi there', 'Hi there', '', ''] : ['', '', '', ''];
          assert.deepEqual(
            answer.texts.map((text) => text ?? ''),
            expected,
          );
          assert.deepEqual(answer.finishes, ['length', 'length', 'length', 'length']);
          assert.deepEqual([answer.usage.prompt_tokens, answer.usage.completion_tokens], [0, 0]);
          assert.match(answer.emulated, /\bmax_tokens\b/);
          const row = await ledgerRow(answer.id);
          assert.deepEqual([row.promptTokens, row.completionTokens, row.estimated], [0, 0, false]);
        });
      }
    }
  }

  test('native OpenAI completions still receive max_tokens 0', async () => {
    const answer = await complete({ model: 'openai/gpt-3.5-turbo-instruct', prompt: 'Hi', max_tokens: 0 });
    assert.equal(mocks.openai.requests.length, 1);
    assert.equal(mocks.openai.requests[0].body.max_tokens, 0);
    assert.doesNotMatch(answer.emulated, /max_tokens/);
  });
});

test('special-token ids are valid token prompts: they reach native OpenAI completions as they are', async () => {
  const prompt = [100257, 100258, 100259, 100260, 100276];
  await complete({ model: 'openai/gpt-3.5-turbo-instruct', prompt, max_tokens: 1 });
  assert.deepEqual(mocks.openai.requests[0].body.prompt, prompt);
});

describe('seeds within each vendor range, one per emulated choice', () => {
  const sentSeeds = (vendor: keyof typeof mocks, read: (body: any) => unknown) =>
    mocks[vendor].requests.map((sent) => read(sent.body)).sort((a, b) => Number(a) - Number(b));

  test('gemini (int32): seed + replica wrapped into the range; each choice keeps its own seed', async () => {
    const cases: [number, number[]][] = [
      [2147483646, [2147483646, 2147483647, -2147483648]],
      [9223372036854775807, [-1, 0, 1]],
      [-9223372036854775808, [0, 1, 2]],
      [-5, [-5, -4, -3]],
    ];
    for (const [seed, expected] of cases) {
      mocks.gemini.reset();
      answerWithSeed('gemini');
      const answer = await complete({ model: 'gemini/gemini-2.5-flash', prompt: 'Hi', n: 3, seed, max_tokens: 4 });
      assert.deepEqual(answer.texts, expected.map(String), `seed ${seed}`);
      assert.deepEqual(
        sentSeeds('gemini', (body) => body.generationConfig.seed),
        [...expected].sort((a, b) => a - b),
        `seed ${seed}`,
      );
    }
  });

  test('a chat-only OpenAI-compatible server without n (int64): each replica sends seed + r, wrapped past the top', async () => {
    const answer = await complete({ model: 'groq/llama-3.1-8b-instant', prompt: 'Hi', n: 2, seed: 9223372036854775807, max_tokens: 4 });
    assert.equal(mocks.groq.requests.length, 2);
    // 2^63 − 1 and its successor wrapped to −2^63 (as doubles, which is how JSON parsers read them).
    assert.deepEqual(
      mocks.groq.requests.map((sent) => sent.body.seed).sort((a, b) => a - b),
      [-(2 ** 63), 2 ** 63],
    );
    assert.equal(answer.texts.length, 2);
  });

  test('mistral (non-negative random_seed): a negative seed is wrapped into the range', async () => {
    await complete({ model: 'mistral/mistral-small-latest', prompt: 'Hi', seed: -1, max_tokens: 4 });
    assert.equal(mocks.mistral.requests[0].body.random_seed, 2147483647);
    assert.equal(mocks.mistral.requests[0].body.seed, undefined);
  });

  test('the mapping: always inside the range, in-range seeds unchanged, replicas distinct', () => {
    const seed = fc.oneof(fc.integer(), fc.maxSafeInteger(), fc.constantFrom(2 ** 63, -(2 ** 63), 2 ** 62, -(2 ** 40)));
    fc.assert(
      fc.property(seed, fc.integer({ min: 0, max: 127 }), (value, replica) => {
        for (const range of [int64SeedRange, int32SeedRange, nonNegativeInt32SeedRange]) {
          const mapped = seedInRange(value, replica, range);
          assert.ok(mapped >= range.min && mapped <= range.max);
          const inside = BigInt(value) >= range.min && BigInt(value) <= range.max;
          if (inside) assert.equal(seedInRange(value, 0, range), BigInt(value));
          if (replica > 0) assert.notEqual(mapped, seedInRange(value, replica - 1, range));
        }
      }),
      { numRuns: 2_000 },
    );
  });

  test('the largest int64 seed reaches OpenAI as exactly 9223372036854775807', () => {
    const generation = request({ model: 'gpt-3.5-turbo-instruct', seed: 2 ** 63, stream: false });
    const model = {
      id: 'openai/gpt-3.5-turbo-instruct',
      vendor: 'openai',
      name: 'gpt-3.5-turbo-instruct',
      contextWindow: 4096,
      capabilities: { logprobs: true, nativeCompletions: true, chat: false },
      countTokens: () => 1,
      exactTokenizer: false,
    };
    const plan = planOpenAICompatible(openaiPreset, generation, model);
    assert.match(completionsBody(openaiPreset, generation, plan, plan.groups[0]), /"seed":9223372036854775807[,}]/);
  });

  test('a body with a seed is the JSON of its fields with the seed in exact digits', () => {
    const fields = fc.dictionary(
      fc.constantFrom('model', 'prompt', 'max_tokens', 'stop', 'user'),
      fc.oneof(fc.string(), fc.integer(), fc.array(fc.string(), { maxLength: 2 })),
      { maxKeys: 5 },
    );
    const seed = fc.bigInt({ min: int64SeedRange.min, max: int64SeedRange.max });
    fc.assert(
      fc.property(fields, fc.option(seed, { nil: null }), fc.constantFrom('seed', 'random_seed'), (body, value, field) => {
        const text = withSeed(body, field, value);
        if (value === null) return assert.equal(text, JSON.stringify(body));
        assert.ok(text.endsWith(`"${field}":${value}}`), text);
        assert.deepEqual(JSON.parse(text), { ...body, [field]: Number(value) });
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('ranges a vendor lacks are refused by name before any call', () => {
  const refusals: [string, Record<string, unknown>, string][] = [
    ['gemini/gemini-2.5-flash', { presence_penalty: 2 }, 'presence_penalty'],
    ['gemini/gemini-2.5-flash', { frequency_penalty: 2 }, 'frequency_penalty'],
    ['gemini/gemini-2.5-flash', { logit_bias: { 50: 1 } }, 'logit_bias'],
    ['anthropic/claude-sonnet-4-5', { temperature: 1.5 }, 'temperature'],
    ['anthropic/claude-sonnet-4-5', { seed: 7 }, 'seed'],
    ['anthropic/claude-sonnet-4-5', { presence_penalty: 0.5 }, 'presence_penalty'],
    ['anthropic/claude-sonnet-4-5', { frequency_penalty: -1 }, 'frequency_penalty'],
    ['groq/llama-3.1-8b-instant', { logit_bias: { 50: 1 } }, 'logit_bias'],
  ];
  for (const [model, overrides, param] of refusals) {
    test(`${model} with ${JSON.stringify(overrides)} → 400 naming '${param}' and the vendor`, async () => {
      const response = await post(gateway, '/v5/completions', { model, prompt: 'Hi', max_tokens: 4, ...overrides });
      assert.equal(response.status, 400, response.text);
      assert.equal(response.body.error.param, param);
      assert.equal(response.body.error.type, 'invalid_request_error');
      assert.ok(response.body.error.message.includes(`'${param}'`) && response.body.error.message.includes(`'${model.split('/')[0]}'`), response.text);
      assert.equal(upstreamCalls(), 0);
    });
  }

  test('gemini takes the penalties just inside its range as they are', async () => {
    await complete({ model: 'gemini/gemini-2.5-flash', prompt: 'Hi', max_tokens: 4, presence_penalty: -2, frequency_penalty: 1.99 });
    const config = mocks.gemini.requests[0].body.generationConfig;
    assert.deepEqual([config.presencePenalty, config.frequencyPenalty], [-2, 1.99]);
  });
});
