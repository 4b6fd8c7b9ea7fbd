/**
 * Keep-alive comments on silent streams: each silent stream gets its pings; when one of them ends,
 * the others keep getting theirs; once all have ended no keep-alive timer is left.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { SseWriter } from '../src/http/sse-writer.js';
import { activeCount } from './support/active-resources.js';

const intervalMs = 150;
let server: Server;
let origin = '';
/** Ends the stream opened at each path. */
const enders = new Map<string, () => void>();

before(async () => {
  server = createServer((incoming, response) => {
    const sse = new SseWriter(response, {}, intervalMs);
    void sse.send('data: open\n\n');
    enders.set(incoming.url ?? '', () => sse.done());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  // A failed assertion leaves streams open: end them, so the server can close.
  for (const end of enders.values()) end();
  server.closeAllConnections();
  return new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Opens a stream and collects its text as it arrives. */
async function open(path: string): Promise<{ text: () => string; ended: Promise<void> }> {
  const response = await request(`${origin}${path}`);
  let text = '';
  const ended = (async () => {
    for await (const chunk of response.body) text += chunk.toString('utf8');
  })();
  return { text: () => text, ended };
}

const pings = (text: string) => text.match(/^: ping$/gm)?.length ?? 0;

test('silent streams get pings; one ending leaves the others pinged; no timer outlives the streams', async () => {
  const before = activeCount('Timeout');
  const streams = [await open('/a'), await open('/b'), await open('/c')];
  await sleep(intervalMs * 3);
  for (const stream of streams) assert.ok(pings(stream.text()) >= 1, `no ping yet: ${JSON.stringify(stream.text())}`);

  enders.get('/b')!();
  await streams[1].ended;
  assert.ok(streams[1].text().endsWith('data: [DONE]\n\n'));
  const afterEnd = [pings(streams[0].text()), pings(streams[2].text())];
  await sleep(intervalMs * 4);
  assert.ok(pings(streams[0].text()) > afterEnd[0], 'the first stream stopped getting pings when another ended');
  assert.ok(pings(streams[2].text()) > afterEnd[1], 'the last stream stopped getting pings when another ended');

  enders.get('/a')!();
  enders.get('/c')!();
  await Promise.all([streams[0].ended, streams[2].ended]);
  await sleep(20);
  assert.equal(activeCount('Timeout'), before, 'the keep-alive timer outlived its streams');
});
