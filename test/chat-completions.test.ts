/**
 * POST /v5/chat/completions through the whole gateway: the chat.completion object and its chunks,
 * the built-in model answering a transcript, each vendor given the conversation in its own wire
 * format, refusals that name what cannot be honoured, and the same metering and ledger as text
 * completions.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI from 'openai';
import { MockUpstream } from './support/mock-upstream.js';
import { get, parseSse, post, startTestGateway, type TestGateway } from './support/test-gateway.js';
import { anthropicMessages, geminiGenerateContent, openaiChat } from './support/vendor-wire.js';

const transport = { connectTimeoutMs: 1000, idleTimeoutMs: 1500, responseTimeoutMs: 2000, maxRetries: 0, retryBaseDelayMs: 5, retryMaxDelayMs: 20 };
const dir = mkdtempSync(join(tmpdir(), 'tollgate-chat-'));
const LOCAL = 'local/tollgate-small';
const CHAT = '/v5/chat/completions';
let gateway: TestGateway;
let openai: MockUpstream;
let anthropic: MockUpstream;
let gemini: MockUpstream;

before(async () => {
  [openai, anthropic, gemini] = await Promise.all([MockUpstream.start(), MockUpstream.start(), MockUpstream.start()]);
  const configPath = join(dir, 'tollgate.json');
  writeFileSync(configPath, JSON.stringify({ vendors: { openai: transport, anthropic: transport, gemini: transport } }));
  gateway = await startTestGateway({
    OPENAI_API_KEY: 'sk-upstream',
    OPENAI_BASE_URL: openai.url,
    ANTHROPIC_API_KEY: 'sk-upstream',
    ANTHROPIC_BASE_URL: anthropic.url,
    GEMINI_API_KEY: 'sk-upstream',
    GEMINI_BASE_URL: gemini.url,
    TOLLGATE_CONFIG: configPath,
  });
});
after(async () => {
  await gateway.stop();
  await Promise.all([openai.close(), anthropic.close(), gemini.close()]);
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  openai.reset();
  anthropic.reset();
  gemini.reset();
});

const conversation = [
  { role: 'developer', content: 'Answer in one word.' },
  { role: 'user', content: 'Name a colour.', name: 'ada' },
  { role: 'assistant', content: 'Red.' },
  {
    role: 'user',
    content: [
      { type: 'text', text: 'Another ' },
      { type: 'text', text: 'one?' },
    ],
  },
];

describe('chat completions on the built-in model', () => {
  test('a chat.completion with the assistant message, usage and a chatcmpl- id the ledger holds', async () => {
    const response = await post(gateway, CHAT, { model: LOCAL, messages: conversation, max_tokens: 6, seed: 7 });
    assert.equal(response.status, 200, response.text);
    const body = response.body;
    assert.match(body.id, /^chatcmpl-/);
    assert.deepEqual(Object.keys(body).sort(), ['choices', 'created', 'id', 'model', 'object', 'system_fingerprint', 'usage']);
    assert.equal(body.object, 'chat.completion');
    assert.equal(body.model, LOCAL);
    assert.deepEqual(Object.keys(body.choices[0]).sort(), ['finish_reason', 'index', 'logprobs', 'message']);
    assert.equal(body.choices[0].message.role, 'assistant');
    assert.equal(typeof body.choices[0].message.content, 'string');
    assert.equal(body.choices[0].message.refusal, null);
    const record = await gateway.server.storage.getUsageRecord(body.id);
    assert.equal(record?.promptTokens, body.usage.prompt_tokens);
    assert.equal(record?.completionTokens, body.usage.completion_tokens);
    assert.equal(record?.model, LOCAL);
    assert.equal(record?.outcome, 'success');
  });

  test('streamed: the role in the first delta, the same text as the whole answer, usage when asked, then [DONE]', async () => {
    const request = { model: LOCAL, messages: conversation, max_tokens: 8, seed: 11, temperature: 1 };
    const whole = await post(gateway, CHAT, request);
    const streamed = await post(gateway, CHAT, { ...request, stream: true, stream_options: { include_usage: true } });
    assert.equal(streamed.status, 200, streamed.text);
    assert.match(streamed.headers.get('content-type') ?? '', /^text\/event-stream/);
    const events = parseSse(streamed.text);
    assert.equal(events.at(-1)?.data, '[DONE]');
    const chunks = events.filter((event) => event.data !== '[DONE]').map((event) => JSON.parse(event.data));
    assert.ok(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.id === chunks[0].id));
    assert.equal(chunks[0].choices[0].delta.role, 'assistant');
    assert.ok(chunks.slice(1).every((chunk) => chunk.choices.every((choice: { delta: object }) => !('role' in choice.delta))));
    const text = chunks.flatMap((chunk) => chunk.choices.map((choice: { delta: { content?: string } }) => choice.delta.content ?? '')).join('');
    assert.equal(text, whole.body.choices[0].message.content);
    const usage = chunks.at(-1);
    assert.deepEqual(usage.choices, []);
    assert.equal(usage.usage.completion_tokens, whole.body.usage.completion_tokens);
  });

  test('logprobs in chat shape: each token with its bytes and top alternatives', async () => {
    const response = await post(gateway, CHAT, { model: LOCAL, messages: conversation, max_tokens: 4, logprobs: true, top_logprobs: 2 });
    assert.equal(response.status, 200, response.text);
    const logprobs = response.body.choices[0].logprobs;
    assert.equal(logprobs.refusal, null);
    assert.equal(logprobs.content.map((entry: { token: string }) => entry.token).join(''), response.body.choices[0].message.content);
    for (const entry of logprobs.content) {
      assert.deepEqual(entry.bytes, [...Buffer.from(entry.token, 'utf8')]);
      assert.equal(entry.top_logprobs.length, 2);
    }
  });

  test('top_logprobs gives at most the alternatives asked for, most likely first; none for logprobs alone', async () => {
    for (const stream of [false, true]) {
      const request = { model: LOCAL, messages: conversation, max_tokens: 6, seed: 5, stream };
      const two = await post(gateway, CHAT, { ...request, logprobs: true, top_logprobs: 2 });
      const none = await post(gateway, CHAT, { ...request, logprobs: true });
      const entries = (response: typeof two) =>
        stream
          ? parseSse(response.text)
              .filter((event) => event.data !== '[DONE]')
              .flatMap((event) =>
                JSON.parse(event.data).choices.flatMap((choice: { logprobs: { content: unknown[] } | null }) => choice.logprobs?.content ?? []),
              )
          : response.body.choices[0].logprobs.content;
      const twos = entries(two);
      assert.ok(twos.length > 0, two.text);
      for (const entry of twos) {
        const logprobs = entry.top_logprobs.map((alternative: { logprob: number }) => alternative.logprob);
        assert.ok(logprobs.length >= 1 && logprobs.length <= 2, JSON.stringify(entry));
        assert.deepEqual(
          logprobs,
          [...logprobs].sort((a, b) => b - a),
        );
      }
      assert.ok(
        entries(none).every((entry: { top_logprobs: unknown[] }) => entry.top_logprobs.length === 0),
        none.text,
      );
    }
  });

  test('the OpenAI SDK: chat.completions.create, whole and streamed', async () => {
    const client = new OpenAI({ apiKey: gateway.key, baseURL: `${gateway.url}/v5`, maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: LOCAL, messages: [{ role: 'user', content: 'Hello' }], max_tokens: 5 });
    assert.equal(completion.choices[0].message.role, 'assistant');
    assert.ok((completion.usage?.completion_tokens ?? 0) > 0);
    const stream = await client.chat.completions.create({ model: LOCAL, messages: [{ role: 'user', content: 'Hello' }], max_tokens: 5, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    assert.ok(text.length > 0);
  });

  test('without max_tokens the answer may use what the context window leaves; a conversation larger than it is refused', async () => {
    const long = 'word '.repeat(5000);
    const refused = await post(gateway, CHAT, { model: LOCAL, messages: [{ role: 'user', content: long }] });
    assert.equal(refused.status, 400, refused.text);
    assert.equal(refused.body.error.code, 'context_length_exceeded');
  });
});

describe('chat completions on the vendors', () => {
  test('openai: the conversation as it is, developer as system, max_completion_tokens, logprobs asked and mapped back', async () => {
    const logprobs = {
      content: [{ token: 'Blue', logprob: -0.25, bytes: [66, 108, 117, 101], top_logprobs: [{ token: 'Blue', logprob: -0.25, bytes: [66, 108, 117, 101] }] }],
    };
    const body = openaiChat.body({ texts: ['Blue'], usage: { prompt: 20, completion: 1 } }) as { choices: Record<string, unknown>[] };
    body.choices[0].logprobs = logprobs;
    openai.reply({ json: body });
    const response = await post(gateway, CHAT, { model: 'openai/gpt-4o-mini', messages: conversation, max_tokens: 5, logprobs: true, top_logprobs: 1 });
    assert.equal(response.status, 200, response.text);
    const sent = openai.requests[0];
    assert.equal(sent.url, '/v1/chat/completions');
    assert.deepEqual(sent.body.messages, [
      { role: 'system', content: 'Answer in one word.' },
      { role: 'user', content: 'Name a colour.', name: 'ada' },
      { role: 'assistant', content: 'Red.' },
      { role: 'user', content: 'Another one?' },
    ]);
    assert.equal(sent.body.max_completion_tokens, 5);
    assert.equal(sent.body.logprobs, true);
    assert.equal(sent.body.top_logprobs, 1);
    assert.equal(response.body.choices[0].message.content, 'Blue');
    assert.deepEqual(response.body.choices[0].logprobs.content[0], {
      token: 'Blue',
      logprob: -0.25,
      bytes: [66, 108, 117, 101],
      top_logprobs: [{ token: 'Blue', logprob: -0.25, bytes: [66, 108, 117, 101] }],
    });
    assert.equal(response.body.usage.prompt_tokens, 20);
  });

  test('without max_tokens a vendor is asked for what the context window leaves, at most 4,096 tokens', async () => {
    openai.reply(openaiChat.json({ texts: ['Blue'], usage: { prompt: 20, completion: 1 } }));
    const response = await post(gateway, CHAT, { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(response.status, 200, response.text);
    assert.equal(openai.requests[0].body.max_completion_tokens, 4096);
  });

  test('anthropic: the system text apart, turns in order, consecutive turns of one role joined', async () => {
    anthropic.reply(anthropicMessages.stream({ texts: [['Gr', 'een']], usage: { prompt: 30, completion: 2 } }));
    const messages = [...conversation, { role: 'user', content: 'Quickly.' }];
    const response = await post(gateway, CHAT, { model: 'anthropic/claude-sonnet-4-5', messages, max_tokens: 5, stream: true });
    assert.equal(response.status, 200, response.text);
    const sent = anthropic.requests[0].body;
    assert.equal(sent.system, 'Answer in one word.');
    assert.deepEqual(sent.messages, [
      { role: 'user', content: 'Name a colour.' },
      { role: 'assistant', content: 'Red.' },
      { role: 'user', content: 'Another one?\n\nQuickly.' },
    ]);
    const text = parseSse(response.text)
      .filter((event) => event.data !== '[DONE]')
      .map((event) => JSON.parse(event.data).choices[0]?.delta?.content ?? '')
      .join('');
    assert.equal(text, 'Green');
  });

  test('gemini: the system text as systemInstruction, the assistant as model', async () => {
    gemini.reply(geminiGenerateContent.json({ texts: ['Yellow'], usage: { prompt: 25, completion: 1 } }));
    const response = await post(gateway, CHAT, { model: 'gemini/gemini-2.5-flash', messages: conversation, max_tokens: 5 });
    assert.equal(response.status, 200, response.text);
    const sent = gemini.requests[0].body;
    assert.deepEqual(sent.systemInstruction, { parts: [{ text: 'Answer in one word.' }] });
    assert.deepEqual(
      sent.contents.map((content: { role: string; parts: { text: string }[] }) => [content.role, content.parts[0].text]),
      [
        ['user', 'Name a colour.'],
        ['model', 'Red.'],
        ['user', 'Another one?'],
      ],
    );
    assert.equal(response.body.choices[0].message.content, 'Yellow');
  });
  test('anthropic and gemini: a conversation of system text alone is refused before any call (their APIs need a turn)', async () => {
    for (const [model, upstream] of [
      ['anthropic/claude-sonnet-4-5', anthropic],
      ['gemini/gemini-2.5-flash', gemini],
    ] as const) {
      const response = await post(gateway, CHAT, { model, messages: [{ role: 'system', content: 'Name a colour.' }], max_tokens: 5, n: 2 });
      assert.equal(response.status, 400, response.text);
      assert.equal(response.body.error.param, 'messages');
      assert.equal(response.body.error.code, 'unsupported_parameter');
      assert.match(response.body.error.message, new RegExp(model.split('/')[0]));
      assert.equal(upstream.requests.length, 0);
    }
    // OpenAI takes it as it is.
    openai.reply(openaiChat.json({ texts: ['Blue'], usage: { prompt: 5, completion: 1 } }));
    const response = await post(gateway, CHAT, { model: 'openai/gpt-4o-mini', messages: [{ role: 'system', content: 'Name a colour.' }], max_tokens: 5 });
    assert.equal(response.status, 200, response.text);
  });

  test('anthropic and gemini: a turn without text is refused by name; an empty last assistant turn is a prefill they continue', async () => {
    for (const [model, upstream] of [
      ['anthropic/claude-sonnet-4-5', anthropic],
      ['gemini/gemini-2.5-flash', gemini],
    ] as const) {
      const messages = [
        { role: 'user', content: 'Name a colour.' },
        { role: 'assistant', content: '' },
        { role: 'user', content: 'Go on.' },
      ];
      const response = await post(gateway, CHAT, { model, messages, max_tokens: 5 });
      assert.equal(response.status, 400, response.text);
      assert.equal(response.body.error.param, 'messages[1].content');
      assert.equal(upstream.requests.length, 0);
    }
    anthropic.reply(anthropicMessages.json({ texts: ['Teal'], usage: { prompt: 9, completion: 1 } }));
    const prefill = await post(gateway, CHAT, {
      model: 'anthropic/claude-sonnet-4-5',
      messages: [
        { role: 'user', content: 'Name a colour.' },
        { role: 'assistant', content: '' },
      ],
      max_tokens: 5,
    });
    assert.equal(prefill.status, 200, prefill.text);
  });
});

describe('chat models', () => {
  test('GET /v5/chat/completions/models lists the models that answer conversations, in the OpenAI and SGP shapes', async () => {
    const response = await get(gateway, '/v5/chat/completions/models');
    assert.equal(response.status, 200, response.text);
    const ids = response.body.items.map((item: { id: string }) => item.id);
    assert.ok(ids.includes(LOCAL) && ids.includes('openai/gpt-4o-mini') && ids.includes('anthropic/claude-sonnet-4-5'), ids.join());
    assert.ok(!ids.includes('openai/gpt-3.5-turbo-instruct'), 'a completions model has no chat endpoint');
    assert.deepEqual(
      response.body.data.map((entry: { id: string }) => entry.id),
      ids,
    );
    const item = response.body.items.find((entry: { id: string }) => entry.id === 'openai/gpt-4o-mini');
    assert.deepEqual([item.model_name, item.model_vendor, item.model_type], ['gpt-4o-mini', 'openai', 'chat_completion']);
    const paged = await get(gateway, `/v5/chat/completions/models?limit=1&starting_after=${encodeURIComponent(ids[0])}`);
    assert.deepEqual(
      paged.body.items.map((entry: { id: string }) => entry.id),
      [ids[1]],
    );
    const all = await get(gateway, '/v5/models');
    const instruct = all.body.data.find((entry: { id: string }) => entry.id === 'openai/gpt-3.5-turbo-instruct');
    assert.equal(instruct.capabilities.chat, false);
  });
});

describe('what chat completions refuse', () => {
  test('each refusal is a 400 naming the parameter, before any upstream call', async () => {
    const message = [{ role: 'user', content: 'Hi' }];
    const cases: [Record<string, unknown>, string, string][] = [
      [{ model: LOCAL, messages: message, tools: [{ type: 'function', function: { name: 'f' } }] }, 'tools', 'unsupported_parameter'],
      [{ model: LOCAL, messages: message, response_format: { type: 'json_object' } }, 'response_format', 'unsupported_parameter'],
      [{ model: 'openai/gpt-3.5-turbo-instruct', messages: message }, 'model', 'unsupported_model'],
      [{ model: LOCAL, messages: [] }, 'messages', 'invalid_value'],
      [{ model: LOCAL, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] }, 'messages[0].content', 'invalid_value'],
      [{ model: LOCAL, messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].role', 'invalid_value'],
      [
        {
          model: LOCAL,
          messages: [...message, { role: 'assistant', content: 'x', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }],
        },
        'messages[1].tool_calls',
        'unsupported_parameter',
      ],
      [
        { model: LOCAL, messages: [{ role: 'assistant', content: 'x', function_call: { name: 'f', arguments: '{}' } }] },
        'messages[0].function_call',
        'unsupported_parameter',
      ],
      [{ model: LOCAL, messages: message, max_tokens: 0 }, 'max_tokens', 'invalid_value'],
      [{ model: LOCAL, messages: message, top_logprobs: 2 }, 'top_logprobs', 'invalid_value'],
      [{ model: LOCAL, messages: message, logprobs: true, top_logprobs: -1 }, 'top_logprobs', 'invalid_value'],
      [{ model: LOCAL, messages: message, max_tokens: 5, max_completion_tokens: 6 }, 'max_tokens', 'invalid_value'],
      [{ model: LOCAL, messages: message, echo: true }, 'echo', 'unknown_parameter'],
      [{ model: LOCAL, prompt: 'Hi' }, 'messages', 'missing_required_parameter'],
    ];
    for (const [body, param, code] of cases) {
      const response = await post(gateway, CHAT, body);
      assert.equal(response.status, 400, `${JSON.stringify(body)}: ${response.text}`);
      assert.equal(response.body.error.param, param, JSON.stringify(body));
      assert.equal(response.body.error.code, code, JSON.stringify(body));
    }
    assert.equal(openai.requests.length, 0);
    // response_format text is the default answer format, and passes.
    const text = await post(gateway, CHAT, { model: LOCAL, messages: message, max_tokens: 2, response_format: { type: 'text' } });
    assert.equal(text.status, 200, text.text);
  });

  test('an Idempotency-Key is claimed per route: the same key on the two APIs is two entries', async () => {
    const headers = { 'idempotency-key': 'chat-and-text' };
    const chat = await post(gateway, CHAT, { model: LOCAL, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 3 }, headers);
    const replay = await post(gateway, CHAT, { model: LOCAL, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 3 }, headers);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(replay.text, chat.text);
    const text = await post(gateway, '/v5/completions', { model: LOCAL, prompt: 'Hi', max_tokens: 3 }, headers);
    assert.equal(text.status, 200, text.text);
    assert.equal(text.headers.get('idempotent-replayed'), null);
  });
});
