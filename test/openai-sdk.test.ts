/** The official openai npm SDK against the real gateway: what OpenAI clients actually do. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from './support/test-gateway.js';

let gateway: TestGateway;
let client: OpenAI;
let model: string;
before(async () => {
  gateway = await startTestGateway();
  model = gateway.server.registry.listModels().find((m) => m.vendor === 'local')!.id;
  client = new OpenAI({ apiKey: gateway.key, baseURL: `${gateway.url}/v5`, maxRetries: 0 });
});
after(() => gateway.stop());

describe('openai SDK', () => {
  test('non-stream completion', async () => {
    const completion = await client.completions.create({ model, prompt: 'The union is', max_tokens: 8 });
    assert.equal(completion.object, 'text_completion');
    assert.equal(completion.choices.length, 1);
    assert.equal(typeof completion.choices[0].text, 'string');
    assert.ok(completion.usage && completion.usage.prompt_tokens > 0);
  });

  test('stream, with include_usage', async () => {
    const stream = await client.completions.create({
      model,
      prompt: 'My fellow citizens',
      max_tokens: 6,
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0,
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    let finish: OpenAI.CompletionChoice['finish_reason'] | undefined;
    for await (const chunk of stream) {
      if (chunk.choices.length) {
        text += chunk.choices[0].text;
        finish = chunk.choices[0].finish_reason ?? finish;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    const plain = await client.completions.create({ model, prompt: 'My fellow citizens', max_tokens: 6, temperature: 0 });
    assert.equal(text, plain.choices[0].text);
    assert.equal(finish, plain.choices[0].finish_reason);
    assert.deepEqual(usage, plain.usage);
  });

  test('stream without include_usage ends cleanly and carries no usage', async () => {
    const stream = await client.completions.create({ model, prompt: 'Peace', max_tokens: 3, stream: true });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.ok(chunks.length >= 1);
    assert.ok(chunks.every((chunk) => !chunk.usage));
  });

  test('prompt lists and n', async () => {
    const completion = await client.completions.create({ model, prompt: ['War', 'Peace'], n: 3, max_tokens: 2, temperature: 1, seed: 11 });
    assert.deepEqual(
      completion.choices.map((c) => c.index),
      [0, 1, 2, 3, 4, 5],
    );
  });

  test('logprobs and echo', async () => {
    const completion = await client.completions.create({ model, prompt: 'The nation', max_tokens: 3, logprobs: 2, echo: true, temperature: 0 });
    const choice = completion.choices[0];
    assert.ok(choice.text.startsWith('The nation'));
    assert.ok(choice.logprobs);
    assert.equal(choice.logprobs!.token_logprobs![0], null);
    assert.equal(choice.logprobs!.tokens!.join(''), choice.text);
    assert.equal(choice.logprobs!.text_offset![0], 0);
  });

  test('stop', async () => {
    const free = await client.completions.create({ model, prompt: 'We the people', max_tokens: 20, temperature: 0 });
    const text = free.choices[0].text;
    const stopAt = text.trim().split(' ')[1];
    if (!stopAt) return;
    const stopped = await client.completions.create({ model, prompt: 'We the people', max_tokens: 20, temperature: 0, stop: [stopAt] });
    assert.equal(stopped.choices[0].finish_reason, 'stop');
    assert.ok(!stopped.choices[0].text.includes(stopAt));
    assert.ok(text.startsWith(stopped.choices[0].text));
  });

  test('error classes for 400, 401 and 404', async () => {
    await assert.rejects(client.completions.create({ model, prompt: 'x', temperature: 5 }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError);
      assert.equal((error as any).param, 'temperature');
      return true;
    });
    const anonymous = new OpenAI({ apiKey: 'tg_wrong', baseURL: `${gateway.url}/v5`, maxRetries: 0 });
    await assert.rejects(anonymous.completions.create({ model, prompt: 'x' }), OpenAI.AuthenticationError);
    await assert.rejects(client.completions.create({ model: 'local/does-not-exist', prompt: 'x' }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.NotFoundError);
      assert.equal((error as any).code, 'model_not_found');
      return true;
    });
  });

  test('models.list', async () => {
    const page = await client.models.list();
    assert.ok(page.data.some((m) => m.id === model));
  });
});
