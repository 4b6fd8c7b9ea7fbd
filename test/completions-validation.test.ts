/** Every validation rule of POST /v5/completions, over raw HTTP, in the OpenAI error shape. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { post, startTestGateway, type TestGateway } from './support/test-gateway.js';

let gateway: TestGateway;
let model: string;
before(async () => {
  gateway = await startTestGateway();
  model = gateway.server.registry.listModels().find((m) => m.vendor === 'local')!.id;
});
after(() => gateway.stop());

function assertErrorShape(body: any, status: number, actual: number): void {
  assert.equal(actual, status, JSON.stringify(body));
  assert.ok(body && typeof body.error === 'object', 'error object');
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type']);
  assert.equal(typeof body.error.message, 'string');
  assert.ok(body.error.message.length > 0);
}

async function expectInvalid(overrides: Record<string, unknown>, param: string | null, status = 400) {
  const response = await post(gateway, '/v5/completions', { model, prompt: 'Hello', max_tokens: 2, ...overrides });
  assertErrorShape(response.body, status, response.status);
  assert.equal(response.body.error.param, param, JSON.stringify(response.body));
  assert.equal(response.body.error.type, 'invalid_request_error');
  return response.body.error;
}

const cases: [string, Record<string, unknown>, string][] = [
  ['empty prompt list', { prompt: [] }, 'prompt'],
  ['prompt list with a non-string', { prompt: ['a', 3] }, 'prompt'],
  ['empty token array inside a list', { prompt: [[1, 2], []] }, 'prompt[1]'],
  ['negative token id', { prompt: [1, -2] }, 'prompt[1]'],
  ['prompt object', { prompt: { text: 'x' } }, 'prompt'],
  ['missing model', { model: undefined }, 'model'],
  ['model not a string', { model: 5 }, 'model'],
  ['max_tokens negative', { max_tokens: -1 }, 'max_tokens'],
  ['max_tokens fractional', { max_tokens: 1.5 }, 'max_tokens'],
  ['max_tokens string', { max_tokens: '10' }, 'max_tokens'],
  ['temperature above 2', { temperature: 2.01 }, 'temperature'],
  ['temperature below 0', { temperature: -0.1 }, 'temperature'],
  ['top_p above 1', { top_p: 1.5 }, 'top_p'],
  ['n zero', { n: 0 }, 'n'],
  ['n above 128', { n: 129 }, 'n'],
  ['best_of above 20', { best_of: 21 }, 'best_of'],
  ['best_of below n', { n: 3, best_of: 2 }, 'best_of'],
  ['best_of with stream', { best_of: 2, stream: true }, 'best_of'],
  ['logprobs above 5', { logprobs: 6 }, 'logprobs'],
  ['logprobs negative', { logprobs: -1 }, 'logprobs'],
  ['stop empty list', { stop: [] }, 'stop'],
  ['stop five strings', { stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
  ['stop number', { stop: 7 }, 'stop'],
  ['presence_penalty above 2', { presence_penalty: 2.5 }, 'presence_penalty'],
  ['frequency_penalty below -2', { frequency_penalty: -2.5 }, 'frequency_penalty'],
  ['logit_bias non-numeric key', { logit_bias: { abc: 1 } }, 'logit_bias.abc'],
  ['logit_bias value above 100', { logit_bias: { '50': 101 } }, 'logit_bias.50'],
  ['logit_bias not an object', { logit_bias: [1, 2] }, 'logit_bias'],
  ['seed fractional', { seed: 1.5 }, 'seed'],
  ['seed string', { seed: 'abc' }, 'seed'],
  ['stream_options without stream', { stream_options: { include_usage: true } }, 'stream_options'],
  ['stream_options unknown key', { stream: true, stream_options: { foo: 1 } }, 'stream_options.foo'],
  ['suffix number', { suffix: 5 }, 'suffix'],
  ['user number', { user: 5 }, 'user'],
  ['echo string', { echo: 'yes' }, 'echo'],
  ['stream string', { stream: 'true' }, 'stream'],
  ['unknown field', { foo: 'bar' }, 'foo'],
];

describe('parameter validation', () => {
  for (const [name, overrides, param] of cases) {
    test(`${name} → 400 naming '${param}'`, async () => {
      const body: Record<string, unknown> = { ...overrides };
      await expectInvalid(body, param);
    });
  }

  test('unknown field gets code unknown_parameter', async () => {
    const error = await expectInvalid({ frobnicate: true }, 'frobnicate');
    assert.equal(error.code, 'unknown_parameter');
  });

  test('missing model gets code missing_required_parameter', async () => {
    const error = await expectInvalid({ model: undefined }, 'model');
    assert.equal(error.code, 'missing_required_parameter');
  });

  test('prompt + max_tokens beyond the context window → 400 context_length_exceeded', async () => {
    const window = gateway.server.registry.listModels().find((m) => m.id === model)!.contextWindow;
    const error = await expectInvalid({ max_tokens: window + 1 }, 'max_tokens');
    assert.equal(error.code, 'context_length_exceeded');
    const long = 'word '.repeat(window);
    const second = await expectInvalid({ prompt: long, max_tokens: 16 }, 'prompt');
    assert.equal(second.code, 'context_length_exceeded');
  });

  test('accepts boundary values', async () => {
    const response = await post(gateway, '/v5/completions', {
      model,
      prompt: 'Hello',
      max_tokens: 0,
      temperature: 2,
      top_p: 0,
      n: 2,
      best_of: 2,
      logprobs: 5,
      stop: ['a', 'b', 'c', 'd'],
      presence_penalty: -2,
      frequency_penalty: 2,
      logit_bias: { '0': -100 },
      seed: -5,
      user: 'u',
    });
    assert.equal(response.status, 200, response.text);
  });

  test('nulls mean "not given"', async () => {
    const response = await post(gateway, '/v5/completions', {
      model,
      prompt: 'Hello',
      max_tokens: 2,
      temperature: null,
      top_p: null,
      n: null,
      stop: null,
      logprobs: null,
      seed: null,
      suffix: null,
      user: null,
      stream: null,
    });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.choices.length, 1);
  });
});

/** Phrases of the validation library's own messages, which a client must never read. */
const libraryPhrases = [
  /expected/i,
  /received/i,
  /too big/i,
  /too small/i,
  /invalid input/i,
  /invalid option/i,
  /unrecognized keys?\b/i,
  /invalid union/i,
  /invalid (string|key|element)/i,
  /must match pattern/i,
];

/** For each parameter, values OpenAI refuses; `base` holds what the parameter needs beside it. */
const badFamilies: { param: string; base?: Record<string, unknown>; values: unknown[] }[] = [
  { param: 'model', values: [5, '', null, [], {}, true] },
  { param: 'prompt', values: [{}, [], 5, true, ['a', 3], [[1], ['a']], [1.5], [-1], [2 ** 31], [[]], [[1], []], Array.from({ length: 2049 }, () => 'p')] },
  { param: 'best_of', values: [-1, 21, 1.5, '2', true, {}] },
  { param: 'echo', values: ['yes', 1, [], {}] },
  { param: 'frequency_penalty', values: [2.01, -2.01, '1', true, []] },
  {
    param: 'logit_bias',
    values: [[1], 'x', 5, { abc: 1 }, { 50: 101 }, { 50: '1' }, { '-1': 1 }, Object.fromEntries(Array.from({ length: 1025 }, (_, id) => [String(id), 1]))],
  },
  { param: 'logprobs', values: [6, -1, 1.5, '1', false] },
  { param: 'max_tokens', values: [-1, 1.5, '10', 2 ** 31, true] },
  { param: 'n', values: [0, 129, 1.5, '2', []] },
  { param: 'presence_penalty', values: [2.5, -3, 'x', {}] },
  { param: 'seed', values: [1.5, 'abc', 2 ** 64, -(2 ** 64), true, [], 1e300] },
  { param: 'stop', values: [7, [], ['a', 'b', 'c', 'd', 'e'], [1], [null], {}] },
  { param: 'stream', values: ['true', 1, {}] },
  { param: 'stream_options', base: { stream: true }, values: ['x', 5, [], { foo: 1 }, { include_usage: 'yes' }, { include_obfuscation: 1 }] },
  { param: 'suffix', values: [5, [], {}] },
  { param: 'temperature', values: [2.01, -0.1, '1', []] },
  { param: 'top_p', values: [1.5, -0.1, 'x'] },
  { param: 'user', values: [5, 'x'.repeat(257), []] },
];

describe('error messages in our own words', () => {
  for (const { param, base, values } of badFamilies) {
    test(`bad '${param}' values → 400 naming '${param}', never the library's wording`, async () => {
      for (const value of values) {
        const body = { model, prompt: 'Hello', max_tokens: 2, ...base, [param]: value };
        const response = await post(gateway, '/v5/completions', body);
        const context = `${param}=${JSON.stringify(value).slice(0, 60)}: ${response.text}`;
        assertErrorShape(response.body, 400, response.status);
        const error = response.body.error;
        assert.equal(error.type, 'invalid_request_error', context);
        assert.ok(error.param === param || error.param.startsWith(`${param}.`) || error.param.startsWith(`${param}[`), context);
        assert.ok(error.message.includes(`'${param}`), context);
        for (const phrase of libraryPhrases) assert.doesNotMatch(error.message, phrase, context);
      }
    });
  }
});

describe('what OpenAI accepts is accepted', () => {
  const accepted: [string, Record<string, unknown>][] = [
    ['an empty prompt', { prompt: '' }],
    ['a list holding one empty prompt', { prompt: [''] }],
    ['a null prompt', { prompt: null }],
    ['no prompt at all', { prompt: undefined }],
    ['best_of 0 with stream', { best_of: 0, stream: true }],
    ['best_of 1 with stream', { best_of: 1, stream: true }],
    ['best_of 0 with n 2', { best_of: 0, n: 2 }],
    ['the largest int64 seed (arrives as 2^63)', { seed: 9223372036854775807 }],
    ['the smallest int64 seed', { seed: -9223372036854775808 }],
    ['an empty stop string', { stop: '' }],
    ['a stop list holding an empty string', { stop: [''] }],
    ['a stop list mixing empty and real stops', { stop: ['', 'zzz', ''] }],
    ['stream_options.include_obfuscation', { stream: true, stream_options: { include_obfuscation: false, include_usage: true } }],
  ];
  for (const [name, overrides] of accepted) {
    test(`${name} → 200`, async () => {
      const response = await post(gateway, '/v5/completions', { model, prompt: 'Hello', max_tokens: 2, ...overrides });
      assert.equal(response.status, 200, response.text);
    });
  }

  test('one choice per prompt, empty prompts included', async () => {
    const response = await post(gateway, '/v5/completions', { model, prompt: ['', 'Hello', ''], max_tokens: 1, n: 2 });
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(
      response.body.choices.map((choice: { index: number }) => choice.index),
      [0, 1, 2, 3, 4, 5],
    );
  });

  test('best_of above 1 with stream stays refused', async () => {
    const error = await expectInvalid({ best_of: 2, n: 1, stream: true }, 'best_of');
    assert.match(error.message, /'best_of'.*'stream'/);
  });
});

describe('malformed requests', () => {
  test('malformed JSON → 400 invalid_json', async () => {
    const response = await post(gateway, '/v5/completions', '{"model": "local/x", ');
    assertErrorShape(response.body, 400, response.status);
    assert.equal(response.body.error.code, 'invalid_json');
  });

  test('a JSON array body → 400', async () => {
    const response = await post(gateway, '/v5/completions', '[1,2]');
    assertErrorShape(response.body, 400, response.status);
  });

  test('wrong content type → 415', async () => {
    const response = await post(gateway, '/v5/completions', 'model=x', { 'content-type': 'application/x-www-form-urlencoded' });
    assertErrorShape(response.body, 415, response.status);
  });

  test('over-large body → 413', async () => {
    const response = await post(gateway, '/v5/completions', { model, prompt: 'x'.repeat(5 * 1024 * 1024) });
    assertErrorShape(response.body, 413, response.status);
  });

  test('malformed model → 400 naming model', async () => {
    for (const bad of ['no-slash', '/name', 'vendor/']) {
      const error = await expectInvalid({ model: bad }, 'model');
      assert.equal(error.code, 'invalid_model');
    }
  });

  test('unknown vendor or model → 404 model_not_found', async () => {
    for (const missing of ['nosuchvendor/x', 'local/no-such-model']) {
      const response = await post(gateway, '/v5/completions', { model: missing, prompt: 'Hi' });
      assertErrorShape(response.body, 404, response.status);
      assert.equal(response.body.error.code, 'model_not_found');
      assert.equal(response.body.error.param, 'model');
    }
  });

  test('an unknown route → 404 in the error shape', async () => {
    const response = await post(gateway, '/v5/nothing-here', {});
    assertErrorShape(response.body, 404, response.status);
  });

  test('every rejected authenticated request still writes one ledger record', async () => {
    const before = await gateway.server.storage.queryUsage({ accountId: gateway.accountId });
    await post(gateway, '/v5/completions', { model, prompt: 'x', temperature: 9 });
    await post(gateway, '/v5/completions', '{bad json');
    await post(gateway, '/v5/completions', { model: 'nosuch/x', prompt: 'x' });
    // Not JSON at all: fastify reads this one, the completions handler still records it.
    const unsupported = await post(gateway, '/v5/completions', 'model=x', { 'content-type': 'application/x-www-form-urlencoded' });
    assert.equal(unsupported.status, 415);
    assert.match(unsupported.headers.get('x-request-id') ?? '', /^req_/);
    const afterReport = await gateway.server.storage.queryUsage({ accountId: gateway.accountId });
    assert.equal(afterReport.totals.requests - before.totals.requests, 4);
    const recent = await gateway.server.storage.recentUsage({ accountId: gateway.accountId, limit: 4 });
    assert.deepEqual(
      recent.map((r) => r.outcome),
      ['invalid_request', 'invalid_request', 'invalid_request', 'invalid_request'],
    );
    assert.deepEqual(recent.map((r) => r.status).sort(), [400, 400, 404, 415]);
  });
});
