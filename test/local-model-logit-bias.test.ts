/**
 * logit_bias on the local model through the real HTTP stack: every cl100k_base id is honoured,
 * including ids the model never saw in training and the special tokens (+100 forces, −100 bans),
 * and an id outside cl100k_base is a 400 that names it. Usage in the response equals the ledger.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { IMPOSSIBLE_LOGPROB } from '../src/local-model/logprobs.js';
import { isLocalModelCached, loadOrTrainLocalModel, locateLocalModel } from '../src/local-model/model-store.js';
import { tokenString } from '../src/local-model/token-text.js';
import type { LocalAdapter } from '../src/vendors/local/local-adapter.js';
import { post, startTestGateway, type TestGateway } from './support/test-gateway.js';

const model = 'local/tollgate-small';
let gateway: TestGateway;
let local: LocalAdapter;

before(async () => {
  const location = locateLocalModel();
  if (!isLocalModelCached(location)) loadOrTrainLocalModel(location);
  gateway = await startTestGateway();
  local = gateway.server.registry.resolve(model).adapter as LocalAdapter;
});

after(() => gateway.stop());

/** A completion as the client sees it, stream or not: text per choice, logprobs, usage. */
async function complete(
  body: Record<string, unknown>,
  stream: boolean,
): Promise<{
  status: number;
  text: string;
  finish: string;
  tokens: string[];
  logprobs: number[];
  usage: { prompt_tokens: number; completion_tokens: number };
  id: string;
  error: any;
}> {
  const response = await post(gateway, '/v5/completions', { model, ...body, ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) });
  if (response.status !== 200)
    return {
      status: response.status,
      text: '',
      finish: '',
      tokens: [],
      logprobs: [],
      usage: { prompt_tokens: -1, completion_tokens: -1 },
      id: '',
      error: response.body?.error,
    };
  const chunks = stream
    ? response.text
        .split('\n')
        .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
        .map((line) => JSON.parse(line.slice(6)))
    : [response.body];
  const result = {
    status: 200,
    text: '',
    finish: '',
    tokens: [] as string[],
    logprobs: [] as number[],
    usage: { prompt_tokens: -1, completion_tokens: -1 },
    id: chunks[0].id as string,
    error: null,
  };
  for (const chunk of chunks) {
    if (chunk.usage) result.usage = chunk.usage;
    for (const choice of chunk.choices ?? []) {
      result.text += choice.text;
      if (choice.finish_reason) result.finish = choice.finish_reason;
      if (choice.logprobs) {
        result.tokens.push(...choice.logprobs.tokens);
        result.logprobs.push(...choice.logprobs.token_logprobs);
      }
    }
  }
  return result;
}

async function assertLedgerMatches(id: string, usage: { prompt_tokens: number; completion_tokens: number }): Promise<void> {
  const record = await gateway.server.storage.getUsageRecord(id);
  assert.ok(record, `ledger record ${id}`);
  assert.deepEqual([record.promptTokens, record.completionTokens, record.estimated], [usage.prompt_tokens, usage.completion_tokens, false]);
}

test('+100 forces an id the model never saw, greedy and sampled, streamed and not; its logprob is the model’s own', async () => {
  const unseen = [...Array(100256).keys()].find((id) => local.model.indexOf(id) < 0 && /^ [a-z]{5,}$/.test(tokenString(id))) as number;
  assert.ok(unseen !== undefined, 'the corpus leaves some plain words unseen');
  for (const stream of [false, true]) {
    for (const sampling of [{ temperature: 0 }, { temperature: 1, seed: 3 }, { temperature: 1.2, top_p: 0.8, seed: 4 }]) {
      const result = await complete({ prompt: 'The state of the Union is', max_tokens: 5, logprobs: 1, logit_bias: { [unseen]: 100 }, ...sampling }, stream);
      assert.equal(result.status, 200, JSON.stringify(result.error));
      assert.equal(result.text, tokenString(unseen).repeat(5), `${JSON.stringify(sampling)} stream ${stream}`);
      assert.deepEqual(result.tokens, Array(5).fill(tokenString(unseen)));
      assert.deepEqual(result.logprobs, Array(5).fill(IMPOSSIBLE_LOGPROB));
      assert.equal(result.finish, 'length');
      assert.deepEqual(result.usage.completion_tokens, 5);
      await assertLedgerMatches(result.id, result.usage);
    }
  }
});

test('special tokens: +100 on <|endoftext|> ends at once, +100 on another special token writes its name', async () => {
  const ended = await complete({ prompt: 'We must', max_tokens: 10, logit_bias: { 100257: 100 } }, false);
  assert.deepEqual([ended.text, ended.finish, ended.usage.completion_tokens], ['', 'stop', 0]);
  for (const [id, name] of [
    [100258, '<|fim_prefix|>'],
    [100260, '<|fim_suffix|>'],
    [100276, '<|endofprompt|>'],
  ] as const) {
    const forced = await complete({ prompt: 'We must', max_tokens: 3, temperature: 0.8, seed: 1, logit_bias: { [id]: 100 } }, true);
    assert.equal(forced.text, name.repeat(3));
    assert.equal(forced.usage.completion_tokens, 3);
    await assertLedgerMatches(forced.id, forced.usage);
  }
});

test('−100 bans a token the model would choose; on an id it never saw it changes nothing', async () => {
  const greedy = await complete({ prompt: 'The state of the Union is', max_tokens: 1, temperature: 0, logprobs: 0 }, false);
  const favourite = local.model.vocabulary[local.texts.strings.indexOf(greedy.tokens[0])];
  const banned = await complete({ prompt: 'The state of the Union is', max_tokens: 1, temperature: 0, logit_bias: { [favourite]: -100 } }, false);
  assert.notEqual(banned.text, greedy.text);
  const unseen = [...Array(100256).keys()].find((id) => local.model.indexOf(id) < 0) as number;
  const plain = await complete({ prompt: 'We must', max_tokens: 12, seed: 9 }, false);
  const biased = await complete({ prompt: 'We must', max_tokens: 12, seed: 9, logit_bias: { [unseen]: -100 } }, false);
  assert.equal(biased.text, plain.text);
});

test('an id outside cl100k_base is a 400 on logit_bias that names it', async () => {
  for (const id of [100256, 100261, 100275, 100277, 5_000_000]) {
    const response = await post(gateway, '/v5/completions', { model, prompt: 'Hi', logit_bias: { [id]: 5 } });
    assert.equal(response.status, 400, response.text);
    assert.equal(response.body.error.param, 'logit_bias');
    assert.equal(response.body.error.type, 'invalid_request_error');
    assert.ok(response.body.error.message.includes(String(id)), response.body.error.message);
  }
});
