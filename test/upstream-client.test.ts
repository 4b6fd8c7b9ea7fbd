/**
 * The upstream client's time limits, against a local server that stalls on purpose: silence
 * before the headers of a stream, silence after the headers of a non-stream answer, a long wait
 * for a non-stream answer's headers (allowed: vendors send them only when done), and a consumer
 * that stops reading (its paused socket is never timed out). No timer outlives a call.
 */
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { transportOptionsSchema } from '../src/vendors/shared/transport-options.js';
import { UpstreamClient } from '../src/vendors/shared/upstream-client.js';
import { VendorError } from '../src/errors/vendor-error.js';
import { activeCount } from './support/active-resources.js';

type Script = (response: ServerResponse) => void;
let server: Server;
let origin: string;
let script: Script = (response) => response.end('{}');
const pending = new Set<NodeJS.Timeout>();
const later = (ms: number, action: () => void) => {
  const timer = setTimeout(() => {
    pending.delete(timer);
    action();
  }, ms);
  pending.add(timer);
};

before(async () => {
  server = createServer((request, response) => {
    request.resume();
    request.on('end', () => script(response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  for (const timer of pending) clearTimeout(timer);
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function client(idleTimeoutMs: number, responseTimeoutMs: number): UpstreamClient {
  return new UpstreamClient({
    vendor: 'stall',
    transport: transportOptionsSchema.parse({ idleTimeoutMs, responseTimeoutMs, connectTimeoutMs: 1_000, maxRetries: 0 }),
    credentialVariable: null,
    secrets: [],
    extractError: () => ({ message: null }),
  });
}

async function call(upstream: UpstreamClient, streaming: boolean): Promise<{ text: string; ms: number }> {
  const started = performance.now();
  const signal = new AbortController().signal;
  const response = await upstream.open({ url: new URL('/v1/completions', origin), headers: {}, body: '{}', streaming, signal, model: 'm' });
  let text = '';
  if (streaming) for await (const chunk of upstream.chunks(response, signal)) text += chunk.toString('utf8');
  else text = await upstream.readText(response, signal);
  return { text, ms: performance.now() - started };
}

async function failure(promise: Promise<unknown>): Promise<VendorError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof VendorError, String(error));
    return error;
  }
  assert.fail('the call succeeded');
}

/** A call with a 200 ms idle limit and a 5 s answer limit must fail with a 504 at the idle limit, leaving no timer behind. */
async function expectIdleTimeout(streaming: boolean, message: RegExp): Promise<void> {
  const upstream = client(200, 5_000);
  const before = activeCount('Timeout');
  const started = performance.now();
  const error = await failure(call(upstream, streaming));
  const elapsed = performance.now() - started;
  assert.deepEqual([error.status, error.code], [504, 'upstream_timeout']);
  assert.match(error.message, message);
  assert.ok(elapsed >= 190 && elapsed < 1_500, `failed after ${elapsed} ms`);
  await upstream.close();
  assert.equal(activeCount('Timeout'), before);
}

test('a stream whose headers do not come within the idle limit fails with a 504 (waiting for an answer)', async () => {
  script = () => {}; // never answers
  await expectIdleTimeout(true, /waiting for an answer/);
});

test('a non-stream answer may take longer than the idle limit to start (vendors answer when done)', async () => {
  const upstream = client(150, 5_000);
  const before = activeCount('Timeout');
  script = (response) => later(600, () => response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
  const { text, ms } = await call(upstream, false);
  assert.equal(text, '{"ok":true}');
  assert.ok(ms >= 590, `answered after ${ms} ms`);
  await upstream.close();
  assert.equal(activeCount('Timeout'), before);
});

test('a non-stream body that stops after its headers fails at the idle limit, long before the answer limit', async () => {
  script = (response) => {
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
    response.write('{"choices": [');
  };
  await expectIdleTimeout(false, /waiting for more output/);
});

test('a stream that keeps sending within the idle limit is never cut, however long it lasts', async () => {
  const upstream = client(200, 5_000);
  script = (response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    let sent = 0;
    const step = () => {
      if (sent === 8) return void response.end('data: [DONE]\n\n');
      response.write(`data: {"n":${sent++}}\n\n`);
      later(100, step);
    };
    step();
  };
  const { text, ms } = await call(upstream, true);
  assert.ok(ms >= 700, `took ${ms} ms`);
  assert.equal(text.match(/"n":/g)?.length, 8);
  assert.ok(text.endsWith('data: [DONE]\n\n'));
  await upstream.close();
});

test('a consumer that stops reading for several idle limits pauses the upstream but is not timed out', async () => {
  const upstream = client(150, 5_000);
  const before = activeCount('Timeout');
  const size = 2 * 1024 * 1024;
  script = (response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const line = `data: ${'x'.repeat(1016)}\n\n`; // 1 KiB
    let written = 0;
    const pump = () => {
      while (written < size) {
        written += line.length;
        if (!response.write(line)) return void response.once('drain', pump);
      }
      response.end();
    };
    pump();
  };
  const signal = new AbortController().signal;
  const response = await upstream.open({ url: new URL('/v1/completions', origin), headers: {}, body: '{}', streaming: true, signal, model: 'm' });
  const chunks = upstream.chunks(response, signal);
  const first = await chunks.next();
  assert.equal(first.done, false);
  let received = (first.value as Buffer).length;
  await new Promise((resolve) => setTimeout(resolve, 800)); // more than five idle limits without reading
  // A full body buffer is what makes undici stop reading the socket.
  assert.ok(response.body.readableLength >= response.body.readableHighWaterMark, 'the gateway should have paused the upstream socket');
  for await (const chunk of chunks) received += chunk.length;
  assert.equal(received, size);
  await upstream.close();
  assert.equal(activeCount('Timeout'), before);
});
