/**
 * A misbehaving upstream, streamed and not: the client gets the right status or stream error event,
 * the ledger gets exactly one record, no socket or timer is left open, and memory returns to its
 * baseline afterwards (even after a 256 MiB answer).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { FaultUpstream, refusedPort, type Fault } from './support/fault-upstream.js';
import { parseSse, post, startTestGateway, type TestGateway } from './support/test-gateway.js';
import { activeCount } from './support/active-resources.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const VENDOR_KEY = 'sk-fault-secret-abcdef123456';
// An 8 MiB cap on a whole (non-stream) body: reading the default 32 MiB of the enormous fault
// can take longer than the response deadline on a loaded machine (a 504 instead of the 502).
// undici checks its idle timeouts on a half-second tick, so a silence of 600 ms is noticed after
// 0.5–1 s: the whole-answer limit stays clear of that, and each limit shows in its own message.
const transport = {
  connectTimeoutMs: 500,
  idleTimeoutMs: 600,
  responseTimeoutMs: 2_000,
  maxRetries: 1,
  retryBaseDelayMs: 5,
  retryMaxDelayMs: 20,
  maxRetryAfterMs: 5_000,
  maxResponseBytes: 8 * 1024 * 1024,
};
const dir = mkdtempSync(join(tmpdir(), 'tollgate-faults-'));
let gateway: TestGateway;
let upstream: FaultUpstream;
let baselineHeap = 0;

function heapAfterGc(): number {
  for (let index = 0; index < 3; index++) gc();
  return process.memoryUsage().heapUsed;
}

async function ledgerCount(): Promise<number> {
  return (await gateway.server.storage.queryUsage({ accountId: gateway.accountId })).totals.requests;
}

async function waitFor(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return check();
}

before(async () => {
  upstream = await FaultUpstream.start();
  const port = await refusedPort();
  const configPath = join(dir, 'tollgate.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      vendors: {
        openai: transport,
        refused: { kind: 'openai-compatible', baseUrl: `http://127.0.0.1:${port}`, ...transport },
      },
    }),
  );
  gateway = await startTestGateway({ OPENAI_API_KEY: VENDOR_KEY, OPENAI_BASE_URL: upstream.url, TOLLGATE_CONFIG: configPath });
  // Warm up every code path once so lazily loaded modules do not count as growth.
  upstream.use('ok');
  for (const stream of [false, true]) await post(gateway, '/v5/completions', { model: 'openai/gpt-3.5-turbo-instruct', prompt: 'Hi', stream });
  baselineHeap = heapAfterGc();
});

after(async () => {
  await gateway.stop();
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Expectation {
  /** The HTTP status the client sees. */
  status: number;
  code?: string;
  /** Streams only: text delivered before the error event (the status is then 200). */
  errorEventAfter?: string;
  /** A success: the whole text. */
  text?: string;
  /** Upstream attempts (1 + retries). */
  attempts?: number;
  retryAfter?: string;
  /** What the error's message must say. */
  message?: RegExp;
}

const cases: { fault: Fault | 'refused'; json: Expectation; stream: Expectation }[] = [
  { fault: 'refused', json: { status: 502, code: 'upstream_unreachable' }, stream: { status: 502, code: 'upstream_unreachable' } },
  {
    fault: 'reset-before-headers',
    json: { status: 502, code: 'upstream_unreachable', attempts: 2 },
    stream: { status: 502, code: 'upstream_unreachable', attempts: 2 },
  },
  {
    fault: 'reset-mid-stream',
    json: { status: 502, code: 'upstream_unreachable', attempts: 2 },
    stream: { status: 200, errorEventAfter: 'Hello', code: 'upstream_unreachable', attempts: 1 },
  },
  { fault: 'hang', json: { status: 504, code: 'upstream_timeout', attempts: 2 }, stream: { status: 504, code: 'upstream_timeout', attempts: 2 } },
  { fault: 'drip', json: { status: 200, text: 'Hello world', attempts: 1 }, stream: { status: 200, text: 'Hello world', attempts: 1 } },
  {
    fault: 'stall-after-headers',
    json: { status: 504, code: 'upstream_timeout', attempts: 2, message: /waiting for more output/ },
    stream: { status: 200, errorEventAfter: 'Hello', code: 'upstream_timeout', attempts: 1, message: /waiting for more output/ },
  },
  { fault: 'drip-forever', json: { status: 504, code: 'upstream_timeout', attempts: 2 }, stream: { status: 504, code: 'upstream_timeout', attempts: 2 } },
  {
    fault: '429',
    json: { status: 429, code: 'upstream_rate_limited', attempts: 2, retryAfter: '1' },
    stream: { status: 429, code: 'upstream_rate_limited', attempts: 2, retryAfter: '1' },
  },
  { fault: '500', json: { status: 502, code: 'upstream_error', attempts: 2 }, stream: { status: 502, code: 'upstream_error', attempts: 2 } },
  { fault: '503', json: { status: 502, code: 'upstream_error', attempts: 2 }, stream: { status: 502, code: 'upstream_error', attempts: 2 } },
  { fault: 'invalid-json', json: { status: 502, code: 'upstream_malformed', attempts: 2 }, stream: { status: 502, code: 'upstream_malformed', attempts: 2 } },
  {
    fault: 'truncated',
    json: { status: 502, code: 'upstream_malformed', attempts: 2 },
    stream: { status: 200, errorEventAfter: 'Hello wor', code: 'upstream_malformed', attempts: 1 },
  },
  { fault: 'malformed-sse', json: { status: 502, code: 'upstream_malformed', attempts: 2 }, stream: { status: 502, code: 'upstream_malformed', attempts: 2 } },
  { fault: 'error-200', json: { status: 502, code: 'upstream_error', attempts: 2 }, stream: { status: 502, code: 'upstream_error', attempts: 2 } },
  { fault: 'enormous', json: { status: 502, code: 'upstream_malformed', attempts: 2 }, stream: { status: 502, code: 'upstream_malformed', attempts: 2 } },
];

function assertErrorShape(body: any, context: string): void {
  assert.ok(body && typeof body.error === 'object', `${context}: ${JSON.stringify(body)}`);
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type'], context);
  assert.equal(typeof body.error.message, 'string');
  assert.ok(!body.error.message.includes(VENDOR_KEY), `${context}: the vendor key leaked`);
}

describe('upstream faults', () => {
  for (const { fault, json, stream: streamed } of cases) {
    for (const stream of [false, true]) {
      const expected = stream ? streamed : json;
      test(`${fault}, ${stream ? 'streamed' : 'not streamed'} → ${expected.status}${expected.errorEventAfter !== undefined ? ' + error event' : ''}`, async () => {
        upstream.use(fault === 'refused' ? 'ok' : fault);
        const timersBefore = activeCount('Timeout');
        const recordsBefore = await ledgerCount();
        const model = fault === 'refused' ? 'refused/some-model' : 'openai/gpt-3.5-turbo-instruct';
        const started = performance.now();
        const response = await post(gateway, '/v5/completions', { model, prompt: 'Say hi', max_tokens: 5, stream });
        const elapsed = performance.now() - started;
        assert.equal(response.status, expected.status, response.text.slice(0, 500));
        assert.ok(elapsed < 8_000, `took ${elapsed} ms`);
        if (expected.status !== 200) {
          assertErrorShape(response.body, fault);
          assert.equal(response.body.error.code, expected.code);
          if (expected.message) assert.match(response.body.error.message, expected.message);
          assert.equal(response.headers.get('content-type')?.startsWith('application/json'), true);
        } else if (stream) {
          assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
          const events = parseSse(response.text);
          const chunks = events.filter((event) => event.event === null && event.data !== '[DONE]').map((event) => JSON.parse(event.data));
          const text = chunks
            .filter((chunk) => chunk.choices)
            .map((chunk) => chunk.choices[0]?.text ?? '')
            .join('');
          if (expected.errorEventAfter !== undefined) {
            assert.equal(text, expected.errorEventAfter);
            const last = chunks.at(-1);
            assertErrorShape(last, fault);
            assert.equal(last.error.code, expected.code);
            if (expected.message) assert.match(last.error.message, expected.message);
            assert.ok(!response.text.includes('[DONE]'), 'a failed stream must not claim success');
          } else {
            assert.equal(text, expected.text);
            assert.ok(response.text.endsWith('event: done\ndata: [DONE]\n\n'));
          }
        } else {
          assert.equal(response.body.choices[0].text, expected.text);
        }
        if (expected.retryAfter) assert.equal(response.headers.get('retry-after'), expected.retryAfter);
        if (expected.attempts !== undefined) assert.equal(upstream.requests.length, expected.attempts, `upstream attempts for ${fault}`);
        // Exactly one ledger record, committed before the response ended.
        assert.equal(await ledgerCount(), recordsBefore + 1);
        // No upstream reply left half-read, no pool growth, no timer left running.
        assert.ok(await waitFor(() => upstream.busySockets === 0, 2_000), `${upstream.busySockets} upstream replies still open`);
        assert.ok(upstream.openSockets <= 2, `${upstream.openSockets} sockets open on the upstream`);
        assert.ok(await waitFor(() => activeCount('Timeout') <= timersBefore, 2_000), `timers: ${activeCount('Timeout')} > ${timersBefore}`);
        if (fault === 'enormous')
          assert.ok(upstream.bytesWritten < 2 * 64 * 1024 * 1024, `the gateway read ${upstream.bytesWritten} bytes of an enormous answer`);
      });
    }
  }

  test('memory returns to its baseline after the whole matrix', () => {
    const growth = heapAfterGc() - baselineHeap;
    assert.ok(growth < 24 * 1024 * 1024, `heap grew by ${Math.round(growth / 1024 / 1024)} MiB`);
  });

  test('the ledger records the vendor status of each failure', async () => {
    const recent = await gateway.server.storage.recentUsage({ accountId: gateway.accountId, limit: 200 });
    const failures = recent.filter((record) => record.outcome !== 'success');
    assert.ok(failures.length >= 20);
    for (const record of failures) {
      assert.ok(['vendor_error', 'rate_limited'].includes(record.outcome), JSON.stringify(record));
      assert.ok(record.status >= 400, JSON.stringify(record));
      assert.ok(record.errorCode?.startsWith('upstream_'), JSON.stringify(record));
    }
  });
});
