/** The completions contract end to end over raw HTTP: auth, response shape, streaming bytes, ledger. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { generateKey } from '../src/auth/api-keys.js';
import { createStorage } from '../src/storage/create-storage.js';
import { get, parseSse, post, startTestGateway, type TestGateway } from './support/test-gateway.js';

let gateway: TestGateway;
let model: string;
before(async () => {
  gateway = await startTestGateway();
  model = gateway.server.registry.listModels().find((m) => m.vendor === 'local')!.id;
});
after(() => gateway.stop());

async function newKey(accountId: string): Promise<{ key: string; id: string }> {
  const generated = generateKey();
  await gateway.server.storage.createKey({ id: generated.id, accountId, name: 'test', prefix: generated.prefix, secretHash: generated.secretHash });
  return { key: generated.key, id: generated.id };
}

describe('auth', () => {
  test('x-api-key and Authorization: Bearer both work', async () => {
    const viaHeader = await post(gateway, '/v5/completions', { model, prompt: 'Hi', max_tokens: 1 });
    assert.equal(viaHeader.status, 200);
    const viaBearer = await post(
      gateway,
      '/v5/completions',
      { model, prompt: 'Hi', max_tokens: 1 },
      { 'x-api-key': '', authorization: `Bearer ${gateway.key}` },
    );
    assert.equal(viaBearer.status, 200, viaBearer.text);
  });

  test('no key, a malformed key and a wrong secret → 401', async () => {
    for (const headers of [{ 'x-api-key': '' }, { 'x-api-key': 'nope' }, { 'x-api-key': gateway.key.slice(0, -1) + (gateway.key.endsWith('A') ? 'B' : 'A') }]) {
      const response = await post(gateway, '/v5/completions', { model, prompt: 'Hi' }, headers);
      assert.equal(response.status, 401);
      assert.equal(response.body.error.type, 'authentication_error');
    }
    const models = await get(gateway, '/v5/models', { 'x-api-key': '' });
    assert.equal(models.status, 401);
  });

  test('x-selected-account-id must match the key account', async () => {
    const ok = await post(gateway, '/v5/completions', { model, prompt: 'Hi', max_tokens: 1 }, { 'x-selected-account-id': gateway.accountId });
    assert.equal(ok.status, 200);
    const other = await post(gateway, '/v5/completions', { model, prompt: 'Hi', max_tokens: 1 }, { 'x-selected-account-id': 'acct_someoneelse' });
    assert.equal(other.status, 403);
    assert.equal(other.body.error.type, 'permission_error');
  });

  test('a revoked key gets 401 at once', async () => {
    const { key, id } = await newKey(gateway.accountId);
    assert.equal((await post(gateway, '/v5/completions', { model, prompt: 'Hi', max_tokens: 1 }, { 'x-api-key': key })).status, 200);
    assert.equal(await gateway.server.storage.revokeKey(id), true);
    const response = await post(gateway, '/v5/completions', { model, prompt: 'Hi', max_tokens: 1 }, { 'x-api-key': key });
    assert.equal(response.status, 401);
    assert.match(response.body.error.message, /revoked/);
  });

  test('a key revoked from another process stops working once the key cache entry expires (TOLLGATE_KEY_CACHE_MS)', async () => {
    for (const cacheMs of [0, 400]) {
      const cached = await startTestGateway({ TOLLGATE_KEY_CACHE_MS: String(cacheMs) });
      // A second storage handle on the same database: what `tollgate keys revoke` in a shell uses.
      const other = await createStorage(cached.databaseUrl);
      try {
        const generated = generateKey();
        await other.createKey({ id: generated.id, accountId: cached.accountId, name: 'cli', prefix: generated.prefix, secretHash: generated.secretHash });
        const call = () => post(cached, '/v5/completions', { model, prompt: 'Hi', max_tokens: 1 }, { 'x-api-key': generated.key });
        // The cache entry dates from the first call's authentication, which can come well before its
        // answer (the first call may load the local model): time the window from before that call.
        const validatedAt = performance.now();
        assert.equal((await call()).status, 200);
        assert.equal(await other.revokeKey(generated.id), true);
        const soon = await call();
        if (cacheMs === 0) assert.equal(soon.status, 401, 'without a cache the revocation applies to the very next request');
        else if (performance.now() - validatedAt < cacheMs) assert.equal(soon.status, 200, 'within the cache time the validated key is reused');
        await new Promise((resolve) => setTimeout(resolve, cacheMs + 50));
        const later = await call();
        assert.equal(later.status, 401);
        assert.match(later.body.error.message, /revoked/);
      } finally {
        await other.close();
        await cached.stop();
      }
    }
  });

  test('keys are stored only as hashes', async () => {
    const { key, id } = await newKey(gateway.accountId);
    const stored = await gateway.server.storage.getKeyWithHash(id);
    assert.ok(stored);
    assert.ok(!JSON.stringify(stored).includes(key.split('_')[2]));
  });
});

describe('response shape', () => {
  test('a completion is exactly the documented Completion', async () => {
    const response = await post(gateway, '/v5/completions', { model, prompt: 'The economy', max_tokens: 5 });
    assert.equal(response.status, 200);
    const body = response.body;
    assert.deepEqual(Object.keys(body).sort(), ['choices', 'created', 'id', 'model', 'object', 'system_fingerprint', 'usage']);
    assert.match(body.id, /^cmpl-/);
    assert.equal(body.object, 'text_completion');
    assert.equal(body.model, model);
    assert.equal(typeof body.created, 'number');
    assert.equal(typeof body.system_fingerprint, 'string');
    assert.equal(body.choices.length, 1);
    assert.deepEqual(Object.keys(body.choices[0]).sort(), ['finish_reason', 'index', 'logprobs', 'text']);
    assert.equal(body.choices[0].logprobs, null);
    assert.ok(['stop', 'length'].includes(body.choices[0].finish_reason));
    assert.deepEqual(Object.keys(body.usage).sort(), [
      'completion_tokens',
      'completion_tokens_details',
      'prompt_tokens',
      'prompt_tokens_details',
      'total_tokens',
    ]);
    assert.deepEqual(Object.keys(body.usage.completion_tokens_details).sort(), [
      'accepted_prediction_tokens',
      'audio_tokens',
      'reasoning_tokens',
      'rejected_prediction_tokens',
    ]);
    assert.deepEqual(Object.keys(body.usage.prompt_tokens_details).sort(), ['audio_tokens', 'cached_tokens']);
    assert.equal(body.usage.total_tokens, body.usage.prompt_tokens + body.usage.completion_tokens);
    assert.equal(body.usage.prompt_tokens, 2);
  });

  test('P prompts × n gives P×N choices indexed prompt × n + j, usage summed', async () => {
    const prompts = ['The nation', 'Our people', 'We must'];
    const response = await post(gateway, '/v5/completions', { model, prompt: prompts, n: 2, max_tokens: 3, temperature: 1, seed: 3 });
    assert.equal(response.status, 200);
    assert.deepEqual(
      response.body.choices.map((c: any) => c.index),
      [0, 1, 2, 3, 4, 5],
    );
    const single = await Promise.all(prompts.map((prompt) => post(gateway, '/v5/completions', { model, prompt, max_tokens: 0 })));
    const promptTokens = single.reduce((sum, r) => sum + r.body.usage.prompt_tokens, 0);
    assert.equal(response.body.usage.prompt_tokens, promptTokens);
  });

  test('x-request-id is returned, the caller’s own value kept', async () => {
    const generated = await post(gateway, '/v5/completions', { model, prompt: 'Hi', max_tokens: 1 });
    assert.match(generated.headers.get('x-request-id') ?? '', /^req_[0-9a-f-]{36}$/);
    const own = await post(gateway, '/v5/completions', { model, prompt: 'Hi', max_tokens: 1 }, { 'x-request-id': 'my-trace-42' });
    assert.equal(own.headers.get('x-request-id'), 'my-trace-42');
    const health = await fetch(`${gateway.url}/health`);
    assert.ok(health.headers.get('x-request-id'));
  });
});

describe('streaming', () => {
  test('SSE bytes: data chunks, finish_reason on the last chunk, event: done then data: [DONE]', async () => {
    const response = await post(gateway, '/v5/completions', { model, prompt: 'The people', max_tokens: 4, stream: true, temperature: 0 });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.ok(response.text.endsWith('event: done\ndata: [DONE]\n\n'), JSON.stringify(response.text.slice(-60)));
    const events = parseSse(response.text);
    const chunks = events.filter((e) => e.event === null).map((e) => JSON.parse(e.data));
    assert.ok(chunks.length >= 2);
    for (const chunk of chunks) {
      assert.equal(chunk.object, 'text_completion');
      assert.equal(chunk.model, model);
      assert.match(chunk.id, /^cmpl-/);
      assert.equal(chunk.choices.length, 1);
      assert.ok(!('usage' in chunk), 'no usage field when include_usage is off');
    }
    assert.equal(new Set(chunks.map((c) => c.id)).size, 1);
    const last = chunks[chunks.length - 1];
    assert.ok(['length', 'stop'].includes(last.choices[0].finish_reason));
    assert.ok(chunks.slice(0, -1).every((c) => c.choices[0].finish_reason === null));
    const streamedText = chunks.map((c) => c.choices[0].text).join('');
    const plain = await post(gateway, '/v5/completions', { model, prompt: 'The people', max_tokens: 4, temperature: 0 });
    assert.equal(streamedText, plain.body.choices[0].text);
  });

  test('include_usage adds a final chunk with choices [] and usage equal to the non-stream usage', async () => {
    const body = { model, prompt: 'Taxes', max_tokens: 6, temperature: 0 };
    const streamed = await post(gateway, '/v5/completions', { ...body, stream: true, stream_options: { include_usage: true } });
    const chunks = parseSse(streamed.text)
      .filter((e) => e.event === null)
      .map((e) => JSON.parse(e.data));
    const last = chunks[chunks.length - 1];
    assert.deepEqual(last.choices, []);
    assert.ok(chunks.slice(0, -1).every((c) => c.usage === null));
    const plain = await post(gateway, '/v5/completions', body);
    assert.deepEqual(last.usage, plain.body.usage);
  });

  test('stream ledger records equal the non-stream ones', async () => {
    const body = { model, prompt: 'Congress', max_tokens: 5, temperature: 0 };
    await post(gateway, '/v5/completions', body);
    await post(gateway, '/v5/completions', { ...body, stream: true });
    const [streamed, plain] = await gateway.server.storage.recentUsage({ accountId: gateway.accountId, limit: 2 });
    assert.equal(streamed.stream, true);
    assert.equal(plain.stream, false);
    assert.equal(streamed.promptTokens, plain.promptTokens);
    assert.equal(streamed.completionTokens, plain.completionTokens);
    assert.equal(streamed.outcome, 'success');
    assert.equal(streamed.estimated, false);
  });
});

describe('logprobs', () => {
  /** Each token that is text (not a `bytes:` fragment) stands in the choice's text at its text_offset. */
  function assertOffsetsPoint(text: string, logprobs: { tokens: string[]; text_offset: number[] }): void {
    assert.equal(logprobs.text_offset.length, logprobs.tokens.length);
    logprobs.tokens.forEach((token, index) => {
      if (token.startsWith('bytes:')) return;
      const offset = logprobs.text_offset[index];
      assert.equal(text.slice(offset, offset + token.length), token, `token ${index} ${JSON.stringify(token)} at ${offset} in ${JSON.stringify(text)}`);
    });
  }

  // The unicorn is spelled with byte-fragment tokens: the text after it must still be found at its offsets.
  const body = { prompt: 'I ❤️ 🦄 café and the nation', echo: true, logprobs: 1, max_tokens: 4, temperature: 0 };

  test('text_offset points at each token, after characters built from byte fragments too', async () => {
    const response = await post(gateway, '/v5/completions', { model, ...body });
    assert.equal(response.status, 200, response.text);
    const choice = response.body.choices[0];
    assert.ok(
      choice.logprobs.tokens.some((token: string) => token.startsWith('bytes:')),
      'the prompt has byte-fragment tokens',
    );
    assertOffsetsPoint(choice.text, choice.logprobs);
  });

  test('streamed text_offset points at each token of the whole choice text', async () => {
    const response = await post(gateway, '/v5/completions', { model, ...body, stream: true });
    assert.equal(response.status, 200, response.text);
    const chunks = parseSse(response.text)
      .filter((event) => event.event === null)
      .map((event) => JSON.parse(event.data));
    const whole = { text: '', tokens: [] as string[], text_offset: [] as number[] };
    for (const chunk of chunks) {
      const choice = chunk.choices[0];
      whole.text += choice.text;
      if (choice.logprobs === null) continue;
      whole.tokens.push(...choice.logprobs.tokens);
      whole.text_offset.push(...choice.logprobs.text_offset);
    }
    assertOffsetsPoint(whole.text, whole);
  });

  test('a byte-order mark echoed as three byte fragments counts as one character', async () => {
    // cl100k ids 171, 119 and 123 are the single bytes EF, BB and BF; 7140 is ' nation'.
    const response = await post(gateway, '/v5/completions', { model, prompt: [171, 119, 123, 7140], echo: true, logprobs: 0, max_tokens: 0 });
    assert.equal(response.status, 200, response.text);
    const choice = response.body.choices[0];
    assert.equal(choice.text, '\uFEFF nation');
    assert.deepEqual(choice.logprobs.text_offset, [0, 0, 0, 1]);
  });

  // OpenAI counts text_offset from the start of the prompt: without echo the first generated token sits at the prompt's length.
  test('without echo, text_offset counts from the start of each choice’s prompt', async () => {
    const prompts = ['The nation', 'We the people of'];
    const response = await post(gateway, '/v5/completions', { model, prompt: prompts, n: 2, logprobs: 1, max_tokens: 3, temperature: 0 });
    assert.equal(response.status, 200, response.text);
    for (const choice of response.body.choices) {
      const prompt = prompts[Math.floor(choice.index / 2)];
      assert.equal(choice.logprobs.text_offset[0], prompt.length, JSON.stringify(choice));
      assertOffsetsPoint(prompt + choice.text, choice.logprobs);
    }
    const tokens = await post(gateway, '/v5/completions', { model, prompt: [791, 1614], logprobs: 0, max_tokens: 2, temperature: 0 });
    assert.equal(tokens.status, 200, tokens.text);
    assertOffsetsPoint(`The state${tokens.body.choices[0].text}`, tokens.body.choices[0].logprobs);
    assert.equal(tokens.body.choices[0].logprobs.text_offset[0], 'The state'.length);
  });

  test('streamed without echo, text_offset counts from the start of the prompt', async () => {
    const prompt = 'The nation';
    const response = await post(gateway, '/v5/completions', { model, prompt, logprobs: 1, max_tokens: 4, temperature: 0, stream: true });
    assert.equal(response.status, 200, response.text);
    const whole = { text: prompt, tokens: [] as string[], text_offset: [] as number[] };
    for (const event of parseSse(response.text).filter((each) => each.event === null)) {
      const choice = JSON.parse(event.data).choices[0];
      whole.text += choice.text;
      if (choice.logprobs === null) continue;
      whole.tokens.push(...choice.logprobs.tokens);
      whole.text_offset.push(...choice.logprobs.text_offset);
    }
    assert.equal(whole.text_offset[0], prompt.length);
    assertOffsetsPoint(whole.text, whole);
  });
});

describe('ledger, usage and models', () => {
  test('every success writes one record with the response id and the returned counts', async () => {
    const response = await post(gateway, '/v5/completions', { model, prompt: 'Freedom', max_tokens: 3 });
    const record = await gateway.server.storage.getUsageRecord(response.body.id);
    assert.ok(record);
    assert.equal(record.accountId, gateway.accountId);
    assert.equal(record.model, model);
    assert.equal(record.vendor, 'local');
    assert.equal(record.promptTokens, response.body.usage.prompt_tokens);
    assert.equal(record.completionTokens, response.body.usage.completion_tokens);
    assert.equal(record.totalTokens, response.body.usage.total_tokens);
    assert.equal(record.status, 200);
    assert.ok(record.latencyMs >= 0);
    assert.ok(record.keyId);
  });

  test('GET /v5/usage returns totals grouped by model, day and key, and CSV', async () => {
    await post(gateway, '/v5/completions', { model, prompt: 'Budget', max_tokens: 2 });
    const all = await gateway.server.storage.queryUsage({ accountId: gateway.accountId });
    for (const groupBy of ['model', 'day', 'key']) {
      const response = await get(gateway, `/v5/usage?group_by=${groupBy}`);
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body.totals.total_tokens, all.totals.totalTokens);
      const sum = response.body.data.reduce((s: number, g: any) => s + g.total_tokens, 0);
      assert.equal(sum, all.totals.totalTokens);
      assert.ok(response.body.data.every((g: any) => groupBy in g));
    }
    const future = await get(gateway, `/v5/usage?since=${encodeURIComponent(new Date(Date.now() + 3600_000).toISOString())}`);
    assert.equal(future.body.totals.requests, 0);
    const csv = await get(gateway, '/v5/usage?group_by=model&format=csv');
    assert.match(csv.headers.get('content-type') ?? '', /text\/csv/);
    assert.match(csv.text, /^model,requests,prompt_tokens/);
    const bad = await get(gateway, '/v5/usage?since=yesterday-ish');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.param, 'since');
  });

  test('an account never sees another account’s usage', async () => {
    const other = await gateway.server.storage.createAccount(`other-${Date.now()}`);
    const { key } = await newKey(other.id);
    const usage = await get(gateway, '/v5/usage', { 'x-api-key': key });
    assert.equal(usage.status, 200);
    assert.equal(usage.body.account_id, other.id);
    assert.equal(usage.body.totals.requests, 0);
  });

  test('GET /v5/models lists vendor/name with context window and capabilities', async () => {
    const response = await get(gateway, '/v5/models');
    assert.equal(response.status, 200);
    assert.equal(response.body.object, 'list');
    const local = response.body.data.find((m: any) => m.id === model);
    assert.ok(local);
    assert.equal(typeof local.context_window, 'number');
    assert.equal(local.owned_by, 'local');
    assert.equal(local.capabilities.logprobs, true);
  });

  test("GET /v5/models answers SGP's SDK too: items of model_name, model_vendor and model_type, paged by cursor", async (t) => {
    // Two aliases beside the built-in model: a list long enough to page through.
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-models-'));
    writeFileSync(join(dir, 'tollgate.json'), JSON.stringify({ aliases: { small: model, tiny: [model] } }));
    const gateway = await startTestGateway({ TOLLGATE_CONFIG: join(dir, 'tollgate.json') });
    t.after(async () => {
      await gateway.stop();
      rmSync(dir, { recursive: true, force: true });
    });
    const whole = await get(gateway, '/v5/models');
    const ids = whole.body.data.map((entry: { id: string }) => entry.id);
    assert.ok(ids.length >= 3, `enough models to page through: ${ids}`);
    assert.deepEqual(
      whole.body.items.map((item: { id: string }) => item.id),
      ids,
    );
    const item = whole.body.items.find((entry: { id: string }) => entry.id === model);
    assert.deepEqual([item.model_name, item.model_vendor, item.model_type], [model.split('/')[1], 'local', 'completion']);
    assert.equal(whole.body.has_more, false);

    const first = await get(gateway, '/v5/models?limit=1');
    assert.deepEqual([first.body.data.length, first.body.items.length, first.body.has_more], [1, 1, ids.length > 1]);
    const rest = await get(gateway, `/v5/models?starting_after=${encodeURIComponent(ids[0])}`);
    assert.deepEqual(
      rest.body.items.map((entry: { id: string }) => entry.id),
      ids.slice(1),
    );
    const before = await get(gateway, `/v5/models?ending_before=${encodeURIComponent(ids.at(-1))}&limit=1`);
    assert.deepEqual(
      before.body.data.map((entry: { id: string }) => entry.id),
      ids.slice(-2, -1),
    );
    for (const [query, param] of [
      ['limit=0', 'limit'],
      ['starting_after=nobody/nothing', 'starting_after'],
      [`starting_after=${encodeURIComponent(ids[0])}&ending_before=${encodeURIComponent(ids[0])}`, 'ending_before'],
    ]) {
      const refused = await get(gateway, `/v5/models?${query}`);
      assert.equal(refused.status, 400, query);
      assert.equal(refused.body.error.param, param, query);
    }
  });

  test('health and ready', async () => {
    assert.equal((await fetch(`${gateway.url}/health`)).status, 200);
    const ready = await fetch(`${gateway.url}/ready`);
    assert.equal(ready.status, 200);
    assert.equal((await ready.json()).storage, 'sqlite');
  });
});

/** Splits raw HTTP/1.1 responses (content-length or chunked bodies) read off one connection. */
function splitResponses(raw: Buffer): { status: number; headers: Record<string, string>; body: string }[] {
  const responses: { status: number; headers: Record<string, string>; body: string }[] = [];
  let at = 0;
  while (at < raw.length) {
    const headEnd = raw.indexOf('\r\n\r\n', at);
    if (headEnd < 0) break;
    const [statusLine, ...lines] = raw.subarray(at, headEnd).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
    at = headEnd + 4;
    let body: Buffer;
    if (headers['content-length'] !== undefined) {
      body = raw.subarray(at, at + Number(headers['content-length']));
      at += body.length;
    } else {
      const parts: Buffer[] = [];
      for (;;) {
        const sizeEnd = raw.indexOf('\r\n', at);
        const size = Number.parseInt(raw.subarray(at, sizeEnd).toString('latin1'), 16);
        at = sizeEnd + 2;
        if (size === 0) {
          at += 2;
          break;
        }
        parts.push(raw.subarray(at, at + size));
        at += size + 2;
      }
      body = Buffer.concat(parts);
    }
    responses.push({ status: Number(statusLine.split(' ')[1]), headers, body: body.toString('utf8') });
  }
  return responses;
}

test('pipelined requests on one connection each get their whole answer, in order', async () => {
  const url = new URL(gateway.url);
  const request = (body: object) => {
    const text = JSON.stringify(body);
    return `POST /v5/completions HTTP/1.1\r\nhost: ${url.host}\r\nx-api-key: ${gateway.key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;
  };
  const socket = connect(Number(url.port), url.hostname);
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  // Three requests in one write: the second and third wait behind the first on the server.
  socket.write(
    request({ model, prompt: 'One', max_tokens: 3 }) +
      request({ model, prompt: 'Two', max_tokens: 3, stream: true }) +
      request({ model, prompt: 'Three café', max_tokens: 3 }),
  );
  const deadline = Date.now() + 10_000;
  let responses: ReturnType<typeof splitResponses> = [];
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    responses = splitResponses(Buffer.concat(chunks));
    if (responses.length === 3 && responses[1].body.includes('[DONE]')) break;
  }
  socket.destroy();
  assert.equal(responses.length, 3);
  assert.deepEqual(
    responses.map((each) => each.status),
    [200, 200, 200],
  );
  const first = JSON.parse(responses[0].body);
  const third = JSON.parse(responses[2].body);
  assert.equal(first.object, 'text_completion');
  assert.equal(third.object, 'text_completion');
  assert.ok(third.usage.prompt_tokens > first.usage.prompt_tokens, "the third answer is the third request's");
  const events = parseSse(responses[1].body);
  assert.equal(events.at(-1)!.data, '[DONE]');
  assert.equal(JSON.parse(events[0].data).object, 'text_completion');
});
