/**
 * Graceful shutdown of the real process: SIGTERM and SIGINT let an in-flight stream finish (up to
 * the grace period), its ledger record is committed, new connections are refused, and the exit
 * code is 0.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createSqliteStorage } from '../src/storage/sqlite/sqlite-storage.js';
import { spawnGateway } from './support/gateway-process.js';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-shutdown-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Starts a long local stream; resolves once its first byte arrived, with the whole body later. */
function startStream(url: string, key: string): Promise<{ status: number; body: Promise<string> }> {
  const payload = JSON.stringify({ model: 'local/tollgate-small', prompt: 'We the people', max_tokens: 4000, stream: true, logit_bias: { '100257': -100 } });
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      `${url}/v5/completions`,
      { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key, 'content-length': Buffer.byteLength(payload) } },
      (response) => {
        let text = '';
        const body = new Promise<string>((done, fail) => {
          response.on('data', (chunk) => {
            text += chunk;
          });
          response.on('end', () => done(text));
          response.on('error', fail);
          response.on('aborted', () => fail(new Error(`stream aborted after ${text.length} bytes`)));
        });
        response.once('data', () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

describe('shutdown', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    test(`${signal} drains an in-flight stream to [DONE], commits its ledger record and exits 0`, async () => {
      const database = join(dir, `${signal}.db`);
      const gateway = await spawnGateway({ DATABASE_URL: `sqlite:${database}`, TOLLGATE_SHUTDOWN_GRACE_MS: '15000' }, ['serve', '--workers', '1']);
      try {
        const key = (await gateway.waitForStdout(/^\s+(tg_[A-Za-z0-9]{12}_[A-Za-z0-9]{32})$/m))[1];
        const stream = await startStream(gateway.url, key);
        assert.equal(stream.status, 200);
        const signalledAt = performance.now();
        gateway.child.kill(signal);
        // While draining, a new connection is not served. The child takes the signal when it is scheduled: until
        // then /health is still served, so ask until the drain shows (a fixed 50 ms wait raced on a loaded machine).
        const health = () =>
          fetch(`${gateway.url}/health`).then(
            (response) => response.status,
            () => 'refused' as const,
          );
        let late = await health();
        for (const waitUntil = performance.now() + 10_000; late === 200 && performance.now() < waitUntil; late = await health())
          await new Promise((resolve) => setTimeout(resolve, 20));
        assert.ok(late === 'refused' || late === 503, `a new request during the drain got ${late}`);
        const text = await stream.body;
        assert.ok(text.endsWith('event: done\ndata: [DONE]\n\n'), `the stream was cut: ...${text.slice(-200)}`);
        const chunks = text
          .split('\n\n')
          .filter((block) => block.startsWith('data: {'))
          .map((block) => JSON.parse(block.slice(6)));
        const id = chunks[0].id as string;
        assert.equal(chunks.at(-1).choices[0].finish_reason, 'length');
        assert.equal(await gateway.exited, 0);
        assert.ok(performance.now() - signalledAt < 15_000);
        const storage = createSqliteStorage(database);
        try {
          const record = await storage.getUsageRecord(id);
          assert.ok(record, 'the drained stream has no ledger record');
          assert.equal(record.outcome, 'success');
          assert.equal(record.completionTokens, 4000);
          assert.equal(record.stream, true);
        } finally {
          await storage.close();
        }
      } finally {
        if (gateway.child.exitCode === null) gateway.child.kill('SIGKILL');
      }
    });
  }
});
