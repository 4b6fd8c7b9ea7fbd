/**
 * The built-in local vendor, tested on the model's real distribution: the adapter is created
 * against a fresh cache directory (so the first test trains), then every sampling parameter is
 * checked against what `distribution` says the model believes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '../src/errors/gateway-error.js';
import { createLogger } from '../src/observability/logger.js';
import { countTokens, decodeTokens, encodeText } from '../src/tokenizer/tokenizer.js';
import { createLocalAdapter, type LocalAdapter } from '../src/vendors/local/local-adapter.js';
import { historyAfter } from '../src/local-model/context-history.js';
import { IMPOSSIBLE_LOGPROB } from '../src/local-model/logprobs.js';
import { isLocalModelCached, locateLocalModel } from '../src/local-model/model-store.js';
import type { RandomSource } from '../src/local-model/random.js';
import { resolveLogitBias } from '../src/local-model/logit-bias.js';
import { LocalSampler } from '../src/local-model/sampler.js';
import { LocalTokenTexts, tokenString } from '../src/local-model/token-text.js';
import { LocalUtf8Assembler } from '../src/local-model/utf8-assembler.js';
import type { GenerationRequest, ModelInfo, StreamPart, TokenLogprob, Usage } from '../src/vendors/types.js';
import { request as baseRequest } from './support/mock-upstream-helpers.js';

const END_OF_TEXT = 100257;
const logger = createLogger('silent');
let cacheDir: string;
let adapter: LocalAdapter;
let model: ModelInfo;
let trainingMs = 0;
let loadedAfterTraining = true;

before(async () => {
  cacheDir = mkdtempSync(join(tmpdir(), 'tollgate-local-model-'));
  const start = performance.now();
  adapter = await createLocalAdapter({ logger, cacheDir });
  trainingMs = performance.now() - start;
  loadedAfterTraining = adapter.modelLoaded;
  model = adapter.resolveModel('tollgate-small') as ModelInfo;
});

after(() => rmSync(cacheDir, { recursive: true, force: true }));

/** The shared request builder, with this file's defaults: the local model, a fixed seed, no stream. */
function request(overrides: Partial<GenerationRequest> = {}): GenerationRequest {
  return baseRequest({ model: 'tollgate-small', prompt: 'The state of the Union is', seed: 7, stream: false, ...overrides });
}

interface Run {
  parts: StreamPart[];
  texts: string[];
  finishes: string[];
  logprobs: TokenLogprob[][];
  usage: { promptTokens: number; completionTokens: number };
}

async function run(overrides: Partial<GenerationRequest> = {}, signal = new AbortController().signal): Promise<Run> {
  const generation = request(overrides);
  // As the pipeline does: prepare, then stream with the plan prepare returned.
  const plan = adapter.prepare(generation, model);
  assert.deepEqual(plan.emulated, []);
  const result: Run = { parts: [], texts: [], finishes: [], logprobs: [], usage: { promptTokens: -1, completionTokens: -1 } };
  const reportUsage = (usage: Usage) => (result.usage = usage);
  for await (const batch of adapter.stream(generation, model, { signal, requestId: 'test', plan, reportUsage }))
    for (const part of batch) {
      result.parts.push(part);
      if (part.type === 'text-delta') {
        result.texts[part.choice] = (result.texts[part.choice] ?? '') + part.text;
        result.logprobs[part.choice] = [...(result.logprobs[part.choice] ?? []), ...(part.logprobs ?? [])];
      } else if (part.type === 'finish') {
        result.finishes[part.choice] = part.finishReason;
        result.texts[part.choice] ??= '';
      }
    }
  return result;
}

/** P(· | context) as cl100k id → probability. */
function distribution(context: number[]): Map<number, number> {
  const workspace = adapter.pool.acquire();
  const probabilities = adapter.model.distribution(context, workspace);
  adapter.pool.release(workspace);
  const map = new Map<number, number>();
  probabilities.forEach((probability, index) => {
    map.set(adapter.model.vocabulary[index], probability);
  });
  return map;
}

function argmax(probabilities: Map<number, number>): number {
  let best = -1;
  let bestProbability = -1;
  for (const [id, probability] of probabilities) if (probability > bestProbability) [best, bestProbability] = [id, probability];
  return best;
}

/** Token id of a generated token string (the model's vocabulary spells each token uniquely). */
function idOf(tokenString: string): number {
  const index = adapter.texts.strings.indexOf(tokenString);
  assert.ok(index >= 0, `unknown token string ${JSON.stringify(tokenString)}`);
  return adapter.model.vocabulary[index];
}

test('trains into an empty cache, then reloads from it in well under a second', async () => {
  assert.ok(trainingMs < 60_000, `training took ${trainingMs} ms`);
  // Trained in a child process: the cache file is written, and this process has not built the
  // model (training's memory stays out of the serving process); it loads on first use.
  assert.equal(isLocalModelCached(locateLocalModel({ cacheDir })), true);
  assert.equal(loadedAfterTraining, false);
  const start = performance.now();
  const reloaded = await createLocalAdapter({ logger, cacheDir });
  const loadMs = performance.now() - start;
  assert.ok(loadMs < 1000, `reload took ${loadMs} ms`);
  assert.deepEqual(reloaded.model.vocabulary, adapter.model.vocabulary);
  const context = encodeText('We the people');
  assert.deepEqual(reloaded.model.distribution(context, reloaded.pool.acquire()), adapter.model.distribution(context, adapter.pool.acquire()));
  assert.equal(adapter.name, 'local');
  assert.deepEqual(
    adapter.listModels().map((info) => info.id),
    ['local/tollgate-small'],
  );
  assert.equal(model.exactTokenizer, true);
  assert.deepEqual(model.capabilities, { logprobs: true, nativeCompletions: true, chat: true });
  assert.equal(model.countTokens('Hello world, again.'), encodeText('Hello world, again.').length);
  assert.equal(adapter.resolveModel('nope'), null);
});

test('probabilities sum to 1 at every step, over emittable tokens only, even after unseen tokens', () => {
  const unseen = [...Array(100256).keys()].find((id) => adapter.model.indexOf(id) < 0) as number;
  assert.ok(unseen !== undefined);
  const contexts = [
    [],
    encodeText('The'),
    encodeText('The state of the Union'),
    encodeText('I ask the Congress to'),
    [unseen],
    [...encodeText('We must'), unseen],
    [unseen, unseen, unseen],
  ];
  for (const context of contexts) {
    const probabilities = distribution(context);
    let sum = 0;
    for (const probability of probabilities.values()) {
      assert.ok(probability > 0);
      sum += probability;
    }
    assert.ok(Math.abs(sum - 1) < 1e-9, `sum ${sum} after ${JSON.stringify(context)}`);
    assert.ok(probabilities.has(END_OF_TEXT));
    assert.ok(!probabilities.has(unseen));
  }
  // Backoff: a context ending in an unseen token is the context-free (unigram-level) distribution.
  assert.deepEqual([...distribution([...encodeText('We must'), unseen]).values()], [...distribution([unseen]).values()]);
});

test('temperature 0 is greedy: deterministic and equal to the argmax chain', async () => {
  const prompt = encodeText('The state of the Union is');
  const first = await run({ temperature: 0, maxTokens: 30, seed: null });
  const second = await run({ temperature: 0, maxTokens: 30, seed: null });
  assert.equal(first.texts[0], second.texts[0]);
  const chain = [...prompt];
  for (let step = 0; step < 30; step++) {
    const next = argmax(distribution(chain));
    if (next === END_OF_TEXT) break;
    chain.push(next);
  }
  assert.equal(first.texts[0], decodeTokens(chain.slice(prompt.length)));
  assert.match(first.texts[0], /^ [a-z]+/); // plausible English continuation
});

test('seeds: same seed reproduces, different seeds differ, no seed is random', async () => {
  const options = { maxTokens: 40, temperature: 0.9 };
  assert.equal((await run({ ...options, seed: 11 })).texts[0], (await run({ ...options, seed: 11 })).texts[0]);
  assert.notEqual((await run({ ...options, seed: 11 })).texts[0], (await run({ ...options, seed: 12 })).texts[0]);
  assert.notEqual((await run({ ...options, seed: null })).texts[0], (await run({ ...options, seed: null })).texts[0]);
  // The cheap mixture sampler (temperature 1) is seeded the same way.
  assert.equal((await run({ maxTokens: 40, seed: 3 })).texts[0], (await run({ maxTokens: 40, seed: 3 })).texts[0]);
});

test('top_p: a tiny nucleus is greedy, and samples stay inside the nucleus', async () => {
  const greedy = await run({ temperature: 0, maxTokens: 25 });
  assert.equal((await run({ topP: 1e-9, maxTokens: 25, seed: 1 })).texts[0], greedy.texts[0]);
  assert.equal((await run({ topP: 1e-9, temperature: 1.5, maxTokens: 25, seed: 2 })).texts[0], greedy.texts[0]);
  assert.equal((await run({ topP: 0, temperature: 0.8, maxTokens: 25, seed: 3 })).texts[0], greedy.texts[0]);
  const probabilities = [...distribution(encodeText('The state of the Union is')).entries()].sort((left, right) => right[1] - left[1]);
  const nucleus = new Set<string>();
  let mass = 0;
  for (const [id, probability] of probabilities) {
    if (mass >= 0.5) break;
    nucleus.add(decodeTokens([id]));
    mass += probability;
  }
  const seen = new Set<string>();
  for (let seed = 0; seed < 40; seed++) {
    const text = (await run({ topP: 0.5, maxTokens: 1, seed })).texts[0];
    assert.ok(nucleus.has(text), `${JSON.stringify(text)} is outside the 0.5 nucleus`);
    seen.add(text);
  }
  assert.ok(seen.size > 1 || nucleus.size === 1);
});

test('max_tokens ends with length; 0 gives empty text', async () => {
  const result = await run({ maxTokens: 5, logprobs: 0, logitBias: { [END_OF_TEXT]: -100 } });
  assert.equal(result.finishes[0], 'length');
  assert.equal(result.logprobs[0].length, 5);
  assert.equal(result.usage.completionTokens, 5);
  const empty = await run({ maxTokens: 0 });
  assert.deepEqual([empty.texts[0], empty.finishes[0], empty.usage.completionTokens], ['', 'length', 0]);
});

test('the model ending by itself finishes with stop and shows no end-of-text text', async () => {
  const result = await run({ maxTokens: 20, logitBias: { [END_OF_TEXT]: 100 }, logprobs: 2 });
  assert.deepEqual([result.texts[0], result.finishes[0], result.usage.completionTokens], ['', 'stop', 0]);
  const greedy = await run({ maxTokens: 20, temperature: 0, logitBias: { [END_OF_TEXT]: 100 } });
  assert.deepEqual([greedy.texts[0], greedy.finishes[0]], ['', 'stop']);
});

test('logit_bias -100 bans a token and +100 forces one', async () => {
  const greedy = await run({ temperature: 0, maxTokens: 1, logprobs: 0 });
  const favourite = idOf(greedy.logprobs[0][0].token);
  const banned = await run({ temperature: 0, maxTokens: 1, logitBias: { [favourite]: -100 } });
  assert.notEqual(banned.texts[0], greedy.texts[0]);
  const the = encodeText(' the')[0];
  for (const temperature of [0, 0.7, 1, 1.3]) {
    const sampled = await run({ temperature, maxTokens: 60, seed: 5, logprobs: 0, logitBias: { [the]: -100 } });
    assert.ok(
      sampled.logprobs[0].every((entry) => entry.token !== ' the'),
      `temperature ${temperature}`,
    );
    const forced = await run({ temperature, maxTokens: 8, seed: 5, logitBias: { [the]: 100 } });
    assert.equal(forced.texts[0], ' the'.repeat(8));
  }
  // A token the model never saw: +100 forces it all the same, at every temperature and with top_p;
  // its reported logprob stays the model's own (probability 0, spelled IMPOSSIBLE_LOGPROB), and it
  // never shows among the alternatives. −100 on it changes nothing: it is never drawn anyway.
  const unseen = [...Array(100256).keys()].find((id) => adapter.model.indexOf(id) < 0 && /^[a-z]+$/.test(tokenString(id))) as number;
  for (const sampling of [{ temperature: 0 }, { temperature: 1 }, { temperature: 1.5, topP: 0.9 }, { temperature: 0.7 }]) {
    const forced = await run({ ...sampling, maxTokens: 6, logprobs: 2, logitBias: { [unseen]: 100 } });
    assert.equal(forced.texts[0], tokenString(unseen).repeat(6), JSON.stringify(sampling));
    assert.deepEqual([forced.finishes[0], forced.usage.completionTokens], ['length', 6]);
    for (const entry of forced.logprobs[0]) {
      assert.deepEqual([entry.token, entry.logprob], [tokenString(unseen), IMPOSSIBLE_LOGPROB]);
      assert.equal(Object.keys(entry.topLogprobs ?? {}).length, 3);
      assert.equal(entry.topLogprobs?.[tokenString(unseen)], IMPOSSIBLE_LOGPROB);
    }
  }
  assert.equal((await run({ maxTokens: 20, logitBias: { [unseen]: -100 } })).texts[0], (await run({ maxTokens: 20 })).texts[0]);
});

test('stop sequences end the text before them, across token boundaries, without leaking a partial match', async () => {
  const greedy = await run({ temperature: 0, maxTokens: 40, logprobs: 0 });
  const tokens = greedy.logprobs[0].map((entry) => entry.token);
  // A stop sequence made of the end of token 5 and the start of token 6.
  const before = tokens.slice(0, 6).join('');
  const stop = tokens[5].slice(-2) + tokens[6].slice(0, 2);
  const expected = greedy.texts[0].slice(0, greedy.texts[0].indexOf(stop));
  assert.ok(expected.length <= before.length);
  for (const logprobs of [null, 2]) {
    const stopped = await run({ temperature: 0, maxTokens: 40, stop: ['never-there', stop], logprobs });
    assert.equal(stopped.texts[0], expected);
    assert.equal(stopped.finishes[0], 'stop');
    for (const part of stopped.parts) {
      if (part.type !== 'text-delta') continue;
      assert.ok(!part.text.includes(stop));
      if (part.logprobs) assert.equal(part.logprobs.map((entry) => entry.token).join(''), part.text);
    }
    assert.ok(stopped.usage.completionTokens <= 7, 'generation stops right away');
  }
});

test('n gives different choices with global indexes; best_of returns the best mean logprob', async () => {
  const two = await run({
    prompts: [
      { kind: 'text', text: 'We must' },
      { kind: 'text', text: 'The economy' },
    ],
    n: 2,
    maxTokens: 12,
    seed: 9,
    temperature: 1.2,
  });
  assert.equal(two.texts.length, 4);
  assert.notEqual(two.texts[0], two.texts[1]);
  assert.ok(two.texts[2] !== two.texts[3]);
  const options = { maxTokens: 12, seed: 21, logprobs: 0, logitBias: { [END_OF_TEXT]: -100 } };
  const all = await run({ ...options, n: 4, bestOf: 4 });
  const means = all.logprobs.map((entries) => entries.reduce((sum, entry) => sum + (entry.logprob as number), 0) / entries.length);
  for (let index = 1; index < means.length; index++) assert.ok(means[index - 1] >= means[index], `ranked: ${means}`);
  const best = await run({ ...options, n: 1, bestOf: 4 });
  assert.equal(best.texts.length, 1);
  assert.equal(best.texts[0], all.texts[0]);
  assert.equal(best.usage.completionTokens, 48, 'discarded candidates are metered');
  const plain = await run({ ...options, n: 1 });
  assert.ok(means[0] >= plain.logprobs[0].reduce((sum, entry) => sum + (entry.logprob as number), 0) / 12 - 1e-12);
});

test('presence and frequency penalties reduce repetition', async () => {
  const distinct = async (overrides: Partial<GenerationRequest>): Promise<number> => {
    const result = await run({ temperature: 0, maxTokens: 150, logprobs: 0, ...overrides });
    return new Set(result.logprobs[0].map((entry) => entry.token)).size / result.logprobs[0].length;
  };
  const baseline = await distinct({});
  assert.ok((await distinct({ frequencyPenalty: 1 })) > baseline + 0.1);
  assert.ok((await distinct({ presencePenalty: 1.5 })) > baseline + 0.1);
  assert.ok((await distinct({ frequencyPenalty: -2 })) < baseline);
  const sampled = async (penalty: number): Promise<number> => {
    const result = await run({ temperature: 0.8, maxTokens: 300, seed: 4, logprobs: 0, frequencyPenalty: penalty });
    return new Set(result.logprobs[0].map((entry) => entry.token)).size / result.logprobs[0].length;
  };
  assert.ok((await sampled(1.5)) > (await sampled(0)));
});

test('logprobs: k alternatives plus the sampled token, values from the model distribution', async () => {
  const prompt = encodeText('The state of the Union is');
  for (const [k, overrides] of [
    [3, {}],
    [5, { temperature: 0.6 }],
    [2, { temperature: 0 }],
    [1, { topP: 0.8 }],
  ] as const) {
    const result = await run({ maxTokens: 12, seed: 8, logprobs: k, ...overrides });
    const context = [...prompt];
    for (const entry of result.logprobs[0]) {
      const id = idOf(entry.token);
      const probabilities = distribution(context);
      assert.ok(Math.abs((entry.logprob as number) - Math.log(probabilities.get(id) as number)) < 1e-9);
      const top = [...probabilities.entries()].sort((left, right) => right[1] - left[1]).slice(0, k);
      const keys = Object.keys(entry.topLogprobs as Record<string, number>);
      const inTop = top.some(([topId]) => topId === id);
      assert.equal(keys.length, inTop ? k : k + 1);
      for (const [topId, probability] of top) {
        const key = topId === END_OF_TEXT ? '<|endoftext|>' : decodeTokens([topId]);
        assert.ok(Math.abs((entry.topLogprobs as Record<string, number>)[key] - Math.log(probability)) < 1e-9);
      }
      context.push(id);
    }
    assert.equal(result.logprobs[0].map((entry) => entry.token).join(''), result.texts[0]);
  }
  const zero = await run({ maxTokens: 6, logprobs: 0 });
  for (const entry of zero.logprobs[0]) assert.deepEqual(entry.topLogprobs, { [entry.token]: entry.logprob });
});

test('echo: the prompt leads the text; with logprobs the first token has null, the rest their model logprobs', async () => {
  const prompt = 'I ask the Congress';
  const plain = await run({ prompts: [{ kind: 'text', text: prompt }], echo: true, maxTokens: 5 });
  const first = plain.parts[0];
  assert.ok(first.type === 'text-delta' && first.text === prompt);
  assert.ok(plain.texts[0].startsWith(prompt) && plain.texts[0].length > prompt.length);
  const scored = await run({ prompts: [{ kind: 'text', text: prompt }], echo: true, maxTokens: 0, logprobs: 2 });
  assert.equal(scored.texts[0], prompt);
  assert.equal(scored.finishes[0], 'length');
  const ids = encodeText(prompt);
  const entries = scored.logprobs[0];
  assert.equal(entries.length, ids.length);
  assert.deepEqual(entries[0], { token: 'I', logprob: null, topLogprobs: null });
  for (let position = 1; position < ids.length; position++) {
    const expected = Math.log(distribution(ids.slice(0, position)).get(ids[position]) as number);
    assert.ok(Math.abs((entries[position].logprob as number) - expected) < 1e-9);
    assert.ok(Object.keys(entries[position].topLogprobs as object).length >= 2);
  }
  assert.equal(entries.map((entry) => entry.token).join(''), prompt);
  assert.equal(scored.usage.promptTokens, ids.length);
  assert.equal(scored.usage.completionTokens, 0);
  const onlyPrompt = await run({ prompts: [{ kind: 'text', text: prompt }], echo: true, maxTokens: 0 });
  assert.deepEqual([onlyPrompt.texts[0], onlyPrompt.finishes[0]], [prompt, 'length']);
});

test('token-array prompts are conditioned on and decoded for echo; ids outside cl100k_base are a 400 on prompt', async () => {
  const ids = encodeText('The state of the Union is');
  const fromTokens = await run({ prompts: [{ kind: 'tokens', tokens: ids }], temperature: 0, maxTokens: 10, echo: true });
  const fromText = await run({ temperature: 0, maxTokens: 10, echo: true });
  assert.equal(fromTokens.texts[0], fromText.texts[0]);
  assert.equal(fromTokens.usage.promptTokens, ids.length);
  for (const bad of [-1, 100256, 100261, 100275, 100277, 1.5, 200000]) {
    assert.throws(
      () => adapter.prepare(request({ prompts: [{ kind: 'tokens', tokens: [100, bad] }] }), model),
      (error: unknown) => {
        return error instanceof GatewayError && error.status === 400 && error.param === 'prompt';
      },
    );
  }
  const unseen = [...Array(100256).keys()].find((id) => adapter.model.indexOf(id) < 0) as number;
  const result = await run({ prompts: [{ kind: 'tokens', tokens: [unseen] }], maxTokens: 5, echo: true, logprobs: 1 });
  assert.equal(result.finishes[0], 'length');
});

test('invalid logit_bias keys are a 400 on logit_bias; suffix is refused with a 400 on suffix', () => {
  for (const key of ['abc', '-1', '1.5', '100256', '100261', '100275', '100277', '999999']) {
    assert.throws(
      () => adapter.prepare(request({ logitBias: { [key]: 1 } }), model),
      (error: unknown) => {
        return error instanceof GatewayError && error.status === 400 && error.param === 'logit_bias' && error.message.includes(`'${key}'`);
      },
    );
  }
  assert.throws(
    () => adapter.prepare(request({ suffix: ' and so on.' }), model),
    (error: unknown) => {
      return error instanceof GatewayError && error.status === 400 && error.param === 'suffix' && error.code === 'unsupported_parameter';
    },
  );
  assert.deepEqual(adapter.prepare(request({ suffix: '' }), model).emulated, []);
});

test('abort stops generation promptly, ends without throwing, and still reports usage', async () => {
  const controller = new AbortController();
  const parts: StreamPart[] = [];
  const reported: Usage[] = [];
  const generation = request({ maxTokens: 3000, logitBias: { [END_OF_TEXT]: -100 } });
  for await (const batch of adapter.stream(generation, model, {
    signal: controller.signal,
    requestId: 'abort',
    reportUsage: (usage) => reported.push(usage),
  })) {
    parts.push(...batch);
    if (parts.length >= 3) controller.abort();
  }
  assert.ok(!parts.some((part) => part.type === 'finish'));
  assert.equal(reported.length, 1, 'usage reported once');
  const [usage] = reported;
  // Parts leave in slices of at most 64 tokens; the abort is honoured at the next slice boundary.
  assert.ok(usage.completionTokens >= 3 && usage.completionTokens <= 64, `${usage.completionTokens}`);
});

test('usage: prompt tokens once per prompt, completion tokens exactly what was generated', async () => {
  const prompts = [
    { kind: 'text' as const, text: 'We must' },
    { kind: 'text' as const, text: 'In the coming year, the Government' },
  ];
  const result = await run({ prompts, n: 2, maxTokens: 20, temperature: 0, logprobs: 0, logitBias: { [END_OF_TEXT]: -100 } });
  assert.equal(result.usage.promptTokens, countTokens(prompts[0].text) + countTokens(prompts[1].text));
  assert.equal(
    result.usage.completionTokens,
    result.logprobs.reduce((sum, entries) => sum + entries.length, 0),
  );
  assert.equal(result.usage.completionTokens, 80);
  assert.equal(countTokens(result.texts[0]), 20);
  assert.equal(countTokens(result.texts[2]), 20);
});

test('long generations yield to the event loop and stay fast', async () => {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  const start = performance.now();
  const result = await run({ maxTokens: 4000, logitBias: { [END_OF_TEXT]: -100 }, seed: 1 });
  const seconds = (performance.now() - start) / 1000;
  clearInterval(timer);
  assert.equal(result.usage.completionTokens, 4000);
  assert.ok(ticks > 0, 'timers ran during generation');
  assert.ok(4000 / seconds > 5000, `${Math.round(4000 / seconds)} tokens/s`);
});

test('byte-fragment tokens are held until they form characters and spelled bytes:\\xNN', async () => {
  const fragments: number[] = [];
  for (let id = 0; id < 100256 && fragments.length < 400; id++) if (tokenString(id).startsWith('bytes:')) fragments.push(id);
  assert.ok(fragments.length > 0);
  // '€' is e2 82 ac: find its lead fragment and build it from fragments the tokenizer knows.
  const texts = new LocalTokenTexts(Int32Array.from(fragments));
  const spelled = texts.strings.map((spelling) => spelling);
  const lead = spelled.indexOf('bytes:\\xe2');
  const middle = spelled.indexOf('bytes:\\x82');
  const last = spelled.indexOf('bytes:\\xac');
  assert.ok(lead >= 0 && middle >= 0 && last >= 0, 'single-byte fragment tokens exist');
  const assembler = new LocalUtf8Assembler(texts);
  assert.equal(assembler.push(lead), null);
  assert.equal(assembler.push(middle), null);
  assert.equal(assembler.push(last), '€');
  assert.equal(assembler.push(middle), '\uFFFD', 'an orphan continuation byte cannot complete and is released');
  // Echoing a token-array prompt of fragments spells each token the OpenAI way and decodes the text.
  const ids = [fragments[lead], fragments[middle], fragments[last]];
  const echoed = await run({ prompts: [{ kind: 'tokens', tokens: ids }], echo: true, maxTokens: 0, logprobs: 0 });
  assert.equal(echoed.texts[0], '€');
  assert.deepEqual(
    echoed.logprobs[0].map((entry) => entry.token),
    ['bytes:\\xe2', 'bytes:\\x82', 'bytes:\\xac'],
  );
});

/** The sampler's target distribution by brute force over the whole vocabulary: softmax((log P + adjustment) / T), then the top_p nucleus. */
function referenceWeights(
  probabilities: Float64Array,
  adjustments: Map<number, number>,
  temperature: number,
  topP: number,
): { order: number[]; weights: Float64Array } {
  const logits = Array.from(probabilities, (probability, token) => (Math.log(probability) + (adjustments.get(token) ?? 0)) / temperature);
  const max = Math.max(...logits);
  const weights = Float64Array.from(logits, (logit) => Math.exp(logit - max));
  const order = [...weights.keys()].sort((left, right) => weights[right] - weights[left] || left - right);
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  let mass = 0;
  let size = 0;
  while (size < order.length && (size === 0 || mass < topP * total)) mass += weights[order[size++]];
  return { order: order.slice(0, size), weights };
}

test('top_p and temperature sampling match the brute-force nucleus and softmax exactly', () => {
  const model = adapter.model;
  const unseen = [...Array(100256).keys()].find((id) => model.indexOf(id) < 0) as number;
  const contexts = [encodeText('The state of the Union is'), encodeText('We must'), encodeText('I ask the Congress to'), encodeText('of the'), [unseen]];
  const the = model.indexOf(encodeText(' the')[0]);
  const cases = [
    { temperature: 1, topP: 0.9, bias: new Map<number, number>() },
    { temperature: 0.7, topP: 0.9, bias: new Map<number, number>() },
    { temperature: 1.3, topP: 0.5, bias: new Map<number, number>() },
    {
      temperature: 0.25,
      topP: 0.95,
      bias: new Map([
        [the, 3],
        [model.endOfText, -2],
      ]),
    },
    { temperature: 1, topP: 0.99, bias: new Map([[the, -100]]) },
  ];
  for (const context of contexts) {
    const nodes = new Int32Array(model.order - 1);
    model.findNodes(historyAfter(model, context), nodes);
    const probabilities = adapter.model.distribution(context, adapter.pool.acquire());
    for (const { temperature, topP, bias } of cases) {
      const { order, weights } = referenceWeights(probabilities, bias, temperature, topP);
      const mass = order.reduce((sum, token) => sum + weights[token], 0);
      const settings = {
        temperature,
        topP,
        biasTokens: Int32Array.from(bias.keys()),
        biasValues: Float64Array.from(bias.values()),
        presencePenalty: 0,
        frequencyPenalty: 0,
        outsideTokens: new Int32Array(0),
      };
      const workspace = adapter.pool.acquire();
      const sampler = new LocalSampler(model, workspace, settings);
      for (let draw = 0.005; draw < 1; draw += 0.01) {
        // The draw inside the nucleus is the inverse CDF of one uniform over the nucleus in descending order.
        const token = sampler.next(nodes, { next: () => draw });
        let target = draw * mass;
        let expected = order.at(-1) as number;
        let nearEdge = false;
        for (const candidate of order) {
          nearEdge ||= Math.abs(target) < 1e-9 * mass;
          target -= weights[candidate];
          if (target < 0) {
            expected = candidate;
            break;
          }
        }
        if (!nearEdge && Math.abs(target) > 1e-9 * mass)
          assert.equal(token, expected, `T ${temperature}, top_p ${topP}, draw ${draw}, context ${JSON.stringify(context)}`);
      }
      sampler.release();
      adapter.pool.release(workspace);
    }
  }
});

test('high-temperature sampling without top_p follows the tempered distribution, tail included', () => {
  const model = adapter.model;
  const context = encodeText('The state of the Union is');
  const nodes = new Int32Array(model.order - 1);
  model.findNodes(historyAfter(model, context), nodes);
  const { weights } = referenceWeights(model.distribution(context, adapter.pool.acquire()), new Map(), 1.8, 1);
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  const ranked = [...weights.keys()].sort((left, right) => weights[right] - weights[left]);
  const workspace = adapter.pool.acquire();
  const sampler = new LocalSampler(model, workspace, {
    temperature: 1.8,
    topP: 1,
    biasTokens: new Int32Array(0),
    biasValues: new Float64Array(0),
    presencePenalty: 0,
    frequencyPenalty: 0,
    outsideTokens: new Int32Array(0),
  });
  const draws = 40_000;
  const counts = new Map<number, number>();
  let seed = 12345;
  const uniform: RandomSource = {
    next: () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 8) / 16777216;
    },
  };
  for (let draw = 0; draw < draws; draw++) {
    const token = sampler.next(nodes, uniform);
    counts.set(token, (counts.get(token) ?? 0) + 1);
  }
  sampler.release();
  adapter.pool.release(workspace);
  // Within 5 standard deviations for the likeliest tokens and for groups of less likely ones (by rank).
  const bounds = [0, 1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, ranked.length];
  for (let group = 0; group + 1 < bounds.length; group++) {
    const members = ranked.slice(bounds[group], bounds[group + 1]);
    const probability = members.reduce((sum, token) => sum + weights[token], 0) / total;
    const observed = members.reduce((sum, token) => sum + (counts.get(token) ?? 0), 0);
    const sigma = Math.sqrt(draws * probability * (1 - probability));
    assert.ok(Math.abs(observed - draws * probability) < 5 * sigma + 1, `ranks ${bounds[group]}–${bounds[group + 1]}: ${observed} vs ${draws * probability}`);
  }
  assert.ok(counts.size > 500, 'the tail is sampled');
});

test('an id outside the vocabulary with a bias is drawn exactly as the least likely known token would be with it', () => {
  const model = adapter.model;
  const outside = [...Array(100256).keys()].find((id) => model.indexOf(id) < 0) as number;
  for (const context of [encodeText('The state of the Union is'), encodeText('We must'), []]) {
    const nodes = new Int32Array(model.order - 1);
    model.findNodes(historyAfter(model, context), nodes);
    const known = model.distribution(context, adapter.pool.acquire());
    // The reference vocabulary: the model's, plus the outside id at the smallest probability the model gives here.
    const probabilities = Float64Array.from([...known, Math.min(...known)]);
    for (const { temperature, topP, bias } of [
      { temperature: 1, topP: 0.999, bias: 18 },
      { temperature: 0.7, topP: 0.9, bias: 20 },
      { temperature: 1.3, topP: 0.5, bias: 19 },
      { temperature: 1, topP: 0.95, bias: 100 },
    ]) {
      const { order, weights } = referenceWeights(probabilities, new Map([[model.vocabularySize, bias]]), temperature, topP);
      const mass = order.reduce((sum, token) => sum + weights[token], 0);
      const settings = { temperature, topP, ...resolveLogitBias(model, [[outside, bias]]), presencePenalty: 0, frequencyPenalty: 0 };
      assert.deepEqual([...settings.biasTokens], [model.vocabularySize]);
      const workspace = adapter.pool.acquire();
      const sampler = new LocalSampler(model, workspace, settings);
      let drewOutside = 0;
      for (let draw = 0.005; draw < 1; draw += 0.01) {
        const token = sampler.next(nodes, { next: () => draw });
        if (token === model.vocabularySize) drewOutside++;
        assert.equal(sampler.modelProbability(nodes, token) > 0, token !== model.vocabularySize);
        let target = draw * mass;
        let expected = order.at(-1) as number;
        let nearEdge = false;
        for (const candidate of order) {
          nearEdge ||= Math.abs(target) < 1e-9 * mass;
          target -= weights[candidate];
          if (target < 0) {
            expected = candidate;
            break;
          }
        }
        if (!nearEdge && Math.abs(target) > 1e-9 * mass)
          assert.equal(token, expected, `T ${temperature}, top_p ${topP}, bias ${bias}, draw ${draw}, context ${JSON.stringify(context)}`);
      }
      assert.ok(drewOutside > 0 && (bias < 100 || drewOutside === 100), `bias ${bias}: drawn ${drewOutside} times in 100`);
      sampler.release();
      adapter.pool.release(workspace);
    }
  }
});
