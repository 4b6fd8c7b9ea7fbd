/**
 * Special tokens in local-model prompts, through the real HTTP stack: token-array prompts may hold
 * cl100k_base's special ids, `<|endoftext|>` in a text prompt is that one special token (OpenAI's
 * default prompt), it starts a new document for the model's context, echo returns its text, and
 * usage counts it once. Echoed prompts are never completion tokens; the ledger equals the response.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { isLocalModelCached, loadOrTrainLocalModel, locateLocalModel } from '../src/local-model/model-store.js';
import { encodeText } from '../src/tokenizer/tokenizer.js';
import { post, startTestGateway, type TestGateway } from './support/test-gateway.js';

const model = 'local/tollgate-small';
const END_OF_TEXT = 100257;
let gateway: TestGateway;

before(async () => {
  const location = locateLocalModel();
  if (!isLocalModelCached(location)) loadOrTrainLocalModel(location);
  gateway = await startTestGateway();
});

after(() => gateway.stop());

interface Completion {
  id: string;
  texts: string[];
  tokens: string[][];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

async function complete(body: Record<string, unknown>, stream = false): Promise<Completion> {
  const response = await post(gateway, '/v5/completions', { model, ...body, ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) });
  assert.equal(response.status, 200, response.text);
  const chunks = stream
    ? response.text
        .split('\n')
        .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
        .map((line) => JSON.parse(line.slice(6)))
    : [response.body];
  const result: Completion = { id: chunks[0].id, texts: [], tokens: [], usage: { prompt_tokens: -1, completion_tokens: -1, total_tokens: -1 } };
  for (const chunk of chunks) {
    if (chunk.usage) result.usage = chunk.usage;
    for (const choice of chunk.choices ?? []) {
      result.texts[choice.index] = (result.texts[choice.index] ?? '') + choice.text;
      result.tokens[choice.index] = [...(result.tokens[choice.index] ?? []), ...(choice.logprobs?.tokens ?? [])];
    }
  }
  const record = await gateway.server.storage.getUsageRecord(result.id);
  assert.ok(record);
  assert.deepEqual([record.promptTokens, record.completionTokens, record.estimated], [result.usage.prompt_tokens, result.usage.completion_tokens, false]);
  return result;
}

test('<|endoftext|> as a text prompt or a token prompt is one prompt token, echoed as its text', async () => {
  const greedy = { max_tokens: 8, temperature: 0, echo: true, logprobs: 0, logit_bias: { [END_OF_TEXT]: -100 } };
  for (const stream of [false, true]) {
    const fromText = await complete({ prompt: '<|endoftext|>', ...greedy }, stream);
    const fromTokens = await complete({ prompt: [END_OF_TEXT], ...greedy }, stream);
    for (const result of [fromText, fromTokens]) {
      assert.equal(result.usage.prompt_tokens, 1);
      assert.equal(result.usage.completion_tokens, 8);
      assert.ok(result.texts[0].startsWith('<|endoftext|>'), result.texts[0]);
      assert.equal(result.tokens[0][0], '<|endoftext|>');
      assert.equal(result.tokens[0].length, 1 + 8);
    }
    assert.deepEqual(fromText.texts, fromTokens.texts);
  }
});

test('<|endoftext|> inside a prompt is a document boundary: what precedes it is not context', async () => {
  const greedy = { max_tokens: 10, temperature: 0, logit_bias: { [END_OF_TEXT]: -100 } };
  const fresh = await complete({ prompt: [END_OF_TEXT], ...greedy });
  const afterText = await complete({ prompt: [...encodeText('I ask the Congress to'), END_OF_TEXT], ...greedy });
  assert.equal(afterText.texts[0], fresh.texts[0]);
  const inText = await complete({ prompt: 'I ask the Congress to<|endoftext|>The Union', ...greedy });
  const alone = await complete({ prompt: 'The Union', ...greedy });
  assert.equal(inText.texts[0], alone.texts[0]);
  assert.equal(inText.usage.prompt_tokens, encodeText('I ask the Congress to').length + 1 + encodeText('The Union').length);
});

test('token prompts with every special token are valid; usage and echo stay exact, streamed or not', async () => {
  const prompt = [100258, ...encodeText('The state'), 100259, 100260, END_OF_TEXT, ...encodeText(' of the'), 100276];
  for (const stream of [false, true]) {
    const result = await complete(
      { prompt: [prompt, encodeText('We must')], n: 2, max_tokens: 6, echo: true, logprobs: 1, seed: 2, logit_bias: { [END_OF_TEXT]: -100 } },
      stream,
    );
    assert.equal(result.usage.prompt_tokens, prompt.length + encodeText('We must').length);
    // The echoed prompts are not completion tokens: 4 choices × 6 generated tokens.
    assert.equal(result.usage.completion_tokens, 4 * 6);
    assert.equal(result.usage.total_tokens, result.usage.prompt_tokens + result.usage.completion_tokens);
    for (const choice of [0, 1]) {
      assert.ok(
        result.texts[choice].startsWith('<|fim_prefix|>The state<|fim_middle|><|fim_suffix|><|endoftext|> of the<|endofprompt|>'),
        result.texts[choice],
      );
      assert.equal(result.tokens[choice].length, prompt.length + 6);
    }
    for (const choice of [2, 3]) assert.ok(result.texts[choice].startsWith('We must'));
  }
});

test('token ids outside cl100k_base are a 400 on prompt', async () => {
  for (const id of [100256, 100261, 100275, 100277]) {
    const response = await post(gateway, '/v5/completions', { model, prompt: [791, id] });
    assert.equal(response.status, 400, response.text);
    assert.equal(response.body.error.param, 'prompt');
    assert.ok(response.body.error.message.includes(String(id)), response.body.error.message);
  }
});
