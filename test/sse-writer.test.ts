import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { request } from 'undici';
import { SseWriter } from '../src/http/sse-writer.js';

/** Each request's script: events, each sent without waiting (`true`) or awaited (`false`); `null` for a pause of a few milliseconds. */
type Script = ([string, boolean] | null)[];
let script: Script = [];
let server: Server;
let url = '';

before(async () => {
  server = createServer(async (_request, response) => {
    const sse = new SseWriter(response, {}, 60_000);
    for (const step of script) {
      if (step === null) await new Promise((resolve) => setTimeout(resolve, 5));
      else if (step[1]) void sse.send(step[0]);
      else await sse.send(step[0]);
    }
    sse.done();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function bytesOf(steps: Script): Promise<Buffer> {
  script = steps;
  const response = await request(url);
  assert.equal(response.statusCode, 200);
  return Buffer.from(await response.body.arrayBuffer());
}

const done = 'event: done\ndata: [DONE]\n\n';

test('plain and non-ASCII events reach the client as UTF-8, byte for byte', async () => {
  const steps: Script = [
    ['data: plain\n\n', true],
    ['data: café 😀 “quoted”\n\n', false],
    null,
    ['data: more plain\n\n', true],
    null,
    ['data: ü\n\n', false],
    ['data: and plain again\n\n', true],
  ];
  const expected = steps.flatMap((step) => (step ? [step[0]] : [])).join('') + done;
  const bytes = await bytesOf(steps);
  assert.equal(bytes.toString('utf8'), expected);
  assert.ok(bytes.equals(Buffer.from(expected, 'utf8')), 'byte for byte UTF-8');
});

test('an all-ASCII stream is byte for byte what UTF-8 gives', async () => {
  const steps: Script = [['data: {"text":" a"}\n\n', true], null, ['data: {"text":" b"}\n\n', true]];
  const bytes = await bytesOf(steps);
  assert.ok(bytes.equals(Buffer.from(`data: {"text":" a"}\n\ndata: {"text":" b"}\n\n${done}`, 'utf8')));
});

async function responseOf(steps: Script): Promise<{ headers: Record<string, unknown>; bytes: Buffer }> {
  script = steps;
  const response = await request(url);
  assert.equal(response.statusCode, 200);
  return { headers: response.headers, bytes: Buffer.from(await response.body.arrayBuffer()) };
}

test('a stream written at once arrives byte for byte as UTF-8, as an event stream', async () => {
  for (const steps of [
    [
      ['data: plain\n\n', true],
      ['data: also plain\n\n', true],
    ],
    [
      ['data: plain\n\n', true],
      ['data: café 😀 “quoted”\n\n', false],
    ],
  ] as Script[]) {
    const expected = Buffer.from(steps.map((step) => step![0]).join('') + done, 'utf8');
    const { headers, bytes } = await responseOf(steps);
    assert.ok(bytes.equals(expected), 'byte for byte');
    assert.equal(headers['content-type'], 'text/event-stream; charset=utf-8');
  }
});

test('a stream that sent events before its end stays chunked', async () => {
  const steps: Script = [['data: first\n\n', true], null, ['data: later ü\n\n', false]];
  const { headers, bytes } = await responseOf(steps);
  assert.equal(bytes.toString('utf8'), `data: first\n\ndata: later ü\n\n${done}`);
  assert.equal(headers['transfer-encoding'], 'chunked');
  assert.equal(headers['content-length'], undefined);
});

test('property: whatever the events and however their writes fall into event-loop passes, the client gets exactly their text, in order', async () => {
  const event = fc.string({ unit: 'grapheme', maxLength: 40 }).map((text) => `data: ${JSON.stringify(text)}\n\n`);
  const step = fc.oneof(fc.tuple(event, fc.boolean()), fc.constant(null));
  await fc.assert(
    fc.asyncProperty(fc.array(step, { maxLength: 12 }), async (steps) => {
      const expected = steps.flatMap((one) => (one ? [one[0]] : [])).join('') + done;
      const bytes = await bytesOf(steps);
      assert.equal(bytes.toString('utf8'), expected);
    }),
    { numRuns: 40 },
  );
});
