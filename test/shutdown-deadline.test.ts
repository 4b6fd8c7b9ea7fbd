/**
 * A stream still running when the shutdown grace period ends is ended by the gateway, and its
 * ledger record (with the tokens produced so far) is still committed before the process exits. What is still running
 * then is answered, not dropped: a stream ends with an error event, a whole answer is a 503.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createSqliteStorage } from '../src/storage/sqlite/sqlite-storage.js';
import { spawnGateway } from './support/gateway-process.js';
import { MockUpstream } from './support/mock-upstream.js';
import { parseSse, startTestGateway } from './support/test-gateway.js';
import { openaiCompletions } from './support/vendor-wire.js';

/** What is left of a response body, and whether its connection was cut instead of ending. */
async function readRest(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<{ text: string; cut: boolean }> {
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, cut: false };
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    return { text, cut: true };
  }
}

const dir = mkdtempSync(join(tmpdir(), 'tollgate-deadline-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('SIGTERM past the grace period: the cut stream is still metered, exit 0', async () => {
  const upstream = await MockUpstream.start();
  const words = Array.from({ length: 40 }, (_, i) => `word${i} `);
  upstream.always(openaiCompletions.stream({ texts: [words], usage: null }, { delayMs: 200 }));
  const dbPath = join(dir, 'tollgate.db');
  const gateway = await spawnGateway(
    {
      DATABASE_URL: `sqlite:${dbPath}`,
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: upstream.url,
      TOLLGATE_SHUTDOWN_GRACE_MS: '600',
    },
    ['serve', '--workers', '1'],
  );
  try {
    const key = (await gateway.waitForStdout(/^\s+(tg_[A-Za-z0-9]{12}_[A-Za-z0-9]{32})$/m))[1];
    const response = await fetch(`${gateway.url}/v5/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ model: 'openai/gpt-3.5-turbo-instruct', prompt: 'slow', stream: true, max_tokens: 200 }),
    });
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    const id = JSON.parse(
      first
        .split('\n')
        .find((line) => line.startsWith('data: {'))!
        .slice(6),
    ).id;
    gateway.child.kill('SIGTERM');
    // The connection may be cut at the deadline.
    const text = first + (await readRest(reader)).text;
    assert.ok(!text.includes('[DONE]'), 'the stream could not finish within the grace period');
    assert.equal(await gateway.exited, 0);
    const storage = createSqliteStorage(dbPath);
    try {
      const record = await storage.getUsageRecord(id);
      assert.ok(record, 'the cut stream has its ledger record');
      // Ended by the gateway, not by its client: recorded as the 503 the client was answered with.
      assert.deepEqual([record.outcome, record.status, record.errorCode], ['error', 503, 'shutting_down']);
      assert.ok(record.completionTokens > 0);
    } finally {
      await storage.close();
    }
  } finally {
    gateway.child.kill('SIGKILL');
    await upstream.close();
  }
});

test('requests still running when the grace period ends are answered: an error event ending the stream, a 503 for a whole answer', async () => {
  const upstream = await MockUpstream.start();
  const words = Array.from({ length: 40 }, (_, i) => `word${i} `);
  upstream.always({
    answer: (recorded) => (recorded.body.stream ? openaiCompletions.stream({ texts: [words], usage: null }, { delayMs: 200 }) : { hang: true }),
  });
  const gateway = await startTestGateway({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: upstream.url, TOLLGATE_SHUTDOWN_GRACE_MS: '600' });
  try {
    const send = (stream: boolean) =>
      fetch(`${gateway.url}/v5/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': gateway.key },
        body: JSON.stringify({ model: 'openai/gpt-3.5-turbo-instruct', prompt: 'slow', stream, max_tokens: 200 }),
      });
    const streamed = await send(true);
    const whole = send(false);
    const reader = streamed.body!.getReader();
    let text = new TextDecoder().decode((await reader.read()).value);
    while (upstream.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    const stopped = gateway.server.stop();
    const read = readRest(reader).then((rest) => {
      text += rest.text + (rest.cut ? '<connection cut>' : '');
    });
    const answer = await whole.then(
      async (response) => ({ status: response.status, body: await response.json() }),
      (error: Error) => ({ status: 0, body: error.message }),
    );
    await read;
    await stopped;
    assert.equal(answer.status, 503, JSON.stringify(answer.body));
    assert.equal(answer.body.error.code, 'shutting_down');
    const events = parseSse(text);
    const last = events.at(-1)!;
    assert.ok(!text.includes('<connection cut>'), `the stream was cut without an answer: ${text.slice(-300)}`);
    assert.equal(JSON.parse(last.data).error?.code, 'shutting_down', text.slice(-300));
    assert.ok(!text.includes('[DONE]'));
  } finally {
    await upstream.close();
  }
});

test('at the deadline a request still waiting on its Idempotency-Key claim is answered 503 too', async (context) => {
  const gateway = await startTestGateway({ TOLLGATE_SHUTDOWN_GRACE_MS: '300' });
  const storage = gateway.server.storage;
  const claimKey = storage.claimIdempotencyKey.bind(storage);
  let claiming!: () => void;
  const claimStarted = new Promise<void>((resolve) => {
    claiming = resolve;
  });
  // A database slow to answer the claim: it returns after the grace period and after the connections are cut
  // (1 s past the deadline): the answer cannot wait for it (an 800 ms claim raced the cut on a loaded machine).
  context.mock.method(storage, 'claimIdempotencyKey', async (claim: Parameters<typeof storage.claimIdempotencyKey>[0]) => {
    claiming();
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    return claimKey(claim);
  });
  const answer = fetch(`${gateway.url}/v5/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': gateway.key, 'idempotency-key': 'slow-claim' },
    body: JSON.stringify({ model: 'local/tollgate-small', prompt: 'The nation', max_tokens: 5 }),
  }).then(
    async (response) => ({ status: response.status, body: await response.json() }),
    (error: Error) => ({ status: 0, body: error.message }),
  );
  await claimStarted;
  const stopped = gateway.stop();
  const { status, body } = await answer;
  await stopped;
  assert.equal(status, 503, JSON.stringify(body));
  assert.equal(body.error.code, 'shutting_down');
});
