/** Metrics, request logs, OpenAPI, and the response contract checked against its own schemas. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { completionChunkSchema, completionSchema, errorSchema } from '../src/completions/completion-response-schema.js';
import { get, type JsonResponse, parseSse, post, startTestGateway, type TestGateway } from './support/test-gateway.js';
import { requestFields } from './support/request-fields.js';

let gateway: TestGateway;
const model = 'local/tollgate-small';
before(async () => {
  gateway = await startTestGateway();
});
after(() => gateway.stop());

describe('observability', () => {
  test('responses match the documented schemas exactly', async () => {
    const plain = await post(gateway, '/v5/completions', { model, prompt: ['One', 'Two'], n: 2, max_tokens: 4, logprobs: 2, echo: true });
    assert.equal(plain.status, 200);
    completionSchema.parse(plain.body);
    const streamed = await post(gateway, '/v5/completions', {
      model,
      prompt: 'Three',
      max_tokens: 4,
      logprobs: 1,
      stream: true,
      stream_options: { include_usage: true },
    });
    for (const event of parseSse(streamed.text).filter((e) => e.event === null)) completionChunkSchema.parse(JSON.parse(event.data));
    const error = await post(gateway, '/v5/completions', { model, prompt: 'x', n: 0 });
    errorSchema.parse(error.body);
  });

  test('GET /metrics exposes requests, tokens, latency, time to first token, overhead, streams and ledger writes', async () => {
    await post(gateway, '/v5/completions', { model, prompt: 'Metrics please', max_tokens: 3 });
    await post(gateway, '/v5/completions', { model, prompt: 'Streamed', max_tokens: 3, stream: true });
    const response = await fetch(`${gateway.url}/metrics`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /text\/plain/);
    const text = await response.text();
    assert.match(text, /tollgate_requests_total\{vendor="local",model="local\/tollgate-small",status="200"\} \d+/);
    assert.match(text, new RegExp(`tollgate_tokens_total\\{account="${gateway.accountId}",model="local/tollgate-small",kind="completion"\\} \\d+`));
    for (const name of [
      'tollgate_request_duration_seconds_bucket',
      'tollgate_time_to_first_token_seconds_bucket',
      'tollgate_gateway_overhead_seconds_bucket',
      'tollgate_in_flight_streams',
      'tollgate_ledger_write_seconds_bucket',
      'tollgate_upstream_latency_seconds',
      'tollgate_upstream_retries_total',
      'process_resident_memory_bytes',
    ]) {
      assert.ok(text.includes(name), name);
    }
    assert.match(text, /tollgate_in_flight_streams 0/);
    // The loop's busy time only grows, and never faster than the clock.
    const active = () =>
      fetch(`${gateway.url}/metrics`)
        .then((r) => r.text())
        .then((body) => Number(/^tollgate_event_loop_active_seconds_total ([0-9.e+-]+)$/m.exec(body)?.[1]));
    const startedAt = performance.now();
    const first = await active();
    await post(gateway, '/v5/completions', { model, prompt: 'Busy', max_tokens: 3 });
    const second = await active();
    assert.ok(first > 0 && second > first, `${first} then ${second}`);
    assert.ok(second - first <= (performance.now() - startedAt) / 1000 + 0.01, `${second - first} s busy in a shorter stretch`);
  });

  test('one JSON log line per request with id, account, key, model, status, tokens and timings; no secrets or prompts', async () => {
    const secretPrompt = 'my very private prompt text 7781';
    const response = await post(gateway, '/v5/completions', { model, prompt: secretPrompt, max_tokens: 2 });
    const line = gateway.logs.find((entry) => entry.completionId === response.body.id);
    assert.ok(line, 'a log line for the request');
    assert.equal(line!.requestId, response.headers.get('x-request-id'), 'the x-request-id the client received');
    for (const field of ['account', 'keyId', 'model', 'vendor', 'status', 'promptTokens', 'completionTokens', 'latencyMs', 'ttftMs'])
      assert.ok(field in line!, field);
    assert.equal(line!.status, 200);
    assert.equal(line!.level, 30);
    assert.equal(line!.msg, 'completion');
    assert.ok(Math.abs(Number(line!.time) - Date.now()) < 60_000);
    assert.equal(gateway.logs.filter((entry) => entry.completionId === response.body.id).length, 1);
    // A model name the caller chose, with quotes, a newline and non-ASCII, stays one valid JSON line.
    const oddModel = 'nope/"q"\n\u2028ü';
    const refused = await post(gateway, '/v5/completions', { model: oddModel, prompt: 'Hi', max_tokens: 1 });
    assert.ok(refused.status >= 400);
    const oddLine = gateway.logs.find((entry) => entry.model === oddModel);
    assert.ok(oddLine, `a log line with the model as sent: ${gateway.rawLogs.slice(-3).join('\n')}`);
    assert.equal(oddLine!.status, refused.status);
    for (const raw of gateway.rawLogs) JSON.parse(raw);
    const all = gateway.rawLogs.join('\n');
    assert.ok(!all.includes(gateway.key), 'no API key in logs');
    assert.ok(!all.includes(secretPrompt), 'no prompt text in logs');
  });

  test('a model outside the catalogue is counted as model="unknown": a 100 KB name is refused, never becomes a label, and its log line stays short', async () => {
    const hugeModel = `local/${'x'.repeat(100_000)}`;
    const refused = await post(gateway, '/v5/completions', { model: hugeModel, prompt: 'Hi', max_tokens: 1 });
    assert.equal(refused.status, 404);
    assert.equal(refused.body.error.code, 'model_not_found');
    const typed = await post(gateway, '/v5/completions', { model: 'local/not-a-model', prompt: 'Hi', max_tokens: 1 });
    assert.equal(typed.status, 404);
    const text = await (await fetch(`${gateway.url}/metrics`)).text();
    assert.ok(!text.includes('xxxxxxxxxx'), "no label holds the client's model name");
    assert.ok(!text.includes('not-a-model'), 'no label holds a model name the catalogue does not have');
    assert.match(text, /tollgate_requests_total\{vendor="none",model="unknown",status="404"\} [2-9]/);
    // Every label value is one of ours: none is longer than the catalogue's longest model name.
    const models = (await get(gateway, '/v5/models')).body.data.map((entry: { id: string }) => entry.id);
    const longest = Math.max(...models.map((id: string) => id.length), gateway.accountId.length);
    const labelValues = [...text.matchAll(/="((?:[^"\\]|\\.)*)"/g)].map((match) => match[1]);
    assert.ok(labelValues.length > 0);
    for (const value of labelValues) assert.ok(value.length <= longest, `label value of ${value.length} characters`);
    const rawLine = gateway.rawLogs.find((line) => line.includes(refused.headers.get('x-request-id') ?? '-') && line.includes('"msg":"completion"'));
    assert.ok(rawLine, 'a completion line for the refused request');
    assert.ok(rawLine!.length < 1_000, `a log line of ${rawLine!.length} characters`);
    const line = JSON.parse(rawLine!) as { model: string; status: number };
    assert.equal(line.status, 404);
    assert.ok(hugeModel.startsWith(line.model) && line.model.length <= 200, 'the model name, cut short');
  });

  test('a stream whose ledger write fails logs the failure with the x-request-id the client received and the completion id', async () => {
    const storage = gateway.server.storage;
    const recordUsage = storage.recordUsage;
    storage.recordUsage = async () => {
      throw new Error('disk on fire');
    };
    let response: JsonResponse;
    try {
      response = await post(gateway, '/v5/completions', { model, prompt: 'Meter me', max_tokens: 2, stream: true });
    } finally {
      storage.recordUsage = recordUsage;
    }
    const events = parseSse(response.text).map((event) => JSON.parse(event.data === '[DONE]' ? 'null' : event.data));
    const completionId = events.find((event) => event?.id)?.id;
    assert.match(String(completionId), /^cmpl-/, 'the chunks carry the completion id');
    assert.equal(events.at(-1)?.error?.code, 'ledger_unavailable');
    const requestId = response.headers.get('x-request-id');
    const failures = gateway.logs.filter((entry) => entry.msg === 'ledger write failed' && entry.requestId === requestId);
    assert.ok(failures.length > 0, 'the ledger failure is logged with the request id');
    for (const failure of failures) {
      assert.equal(failure.completionId, completionId);
      assert.equal(failure.level, 40);
      assert.equal(failure.err, 'disk on fire');
    }
    const completion = gateway.logs.find((entry) => entry.msg === 'completion' && entry.requestId === requestId);
    assert.equal(completion?.completionId, completionId);
    assert.equal(completion?.status, 503);
  });

  test('GET /openapi.json is an OpenAPI 3.1 document built from the validation schemas', async () => {
    const response = await get(gateway, '/openapi.json');
    assert.equal(response.status, 200);
    assert.equal(response.body.openapi, '3.1.0');
    const request = response.body.components.schemas.CompletionRequest;
    assert.equal(request.additionalProperties, false);
    for (const field of requestFields) {
      assert.ok(field in request.properties, field);
    }
    // prompt may be absent (OpenAI's default prompt), as OpenAI accepts it.
    assert.deepEqual(request.required.sort(), ['model']);
    assert.ok(response.body.paths['/v5/completions'].post);
  });

  test('/ready reports storage and the configured vendors', async () => {
    const response = await get(gateway, '/ready');
    assert.equal(response.status, 200);
    assert.ok(response.body.vendors.includes('local'));
  });
});
