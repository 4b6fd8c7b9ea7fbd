/**
 * kill -9 under load: every response a client received in full has its ledger record, because
 * the record is committed before the response's last byte.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createSqliteStorage } from '../src/storage/sqlite/sqlite-storage.js';
import { spawnGateway } from './support/gateway-process.js';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-kill-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('every completed response survives kill -9 in the ledger', async () => {
  const dbPath = join(dir, 'tollgate.db');
  const gateway = await spawnGateway({ DATABASE_URL: `sqlite:${dbPath}` });
  const key = (await gateway.waitForStdout(/^\s+(tg_[A-Za-z0-9]{12}_[A-Za-z0-9]{32})$/m))[1];
  const completed: string[] = [];
  let killed = false;
  const deadline = Date.now() + 1500;

  async function worker(index: number): Promise<void> {
    for (let i = 0; i < 500 && !killed; i++) {
      const stream = (index + i) % 2 === 0;
      try {
        const response = await fetch(`${gateway.url}/v5/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key },
          body: JSON.stringify({ model: 'local/tollgate-small', prompt: `Worker ${index} request ${i}`, max_tokens: 8, stream }),
        });
        const text = await response.text();
        if (response.status !== 200) continue;
        if (stream) {
          if (!text.endsWith('data: [DONE]\n\n')) continue;
          const first = text.split('\n').find((line) => line.startsWith('data: {'))!;
          completed.push(JSON.parse(first.slice(6)).id);
        } else {
          completed.push(JSON.parse(text).id);
        }
      } catch {
        // the connection died with the process: that response was not received in full
      }
      if (Date.now() > deadline && !killed) {
        killed = true;
        gateway.child.kill('SIGKILL');
      }
    }
  }
  await Promise.all(Array.from({ length: 8 }, (_, index) => worker(index)));
  if (!killed) gateway.child.kill('SIGKILL');
  await gateway.exited;

  assert.ok(completed.length > 20, `only ${completed.length} responses completed`);
  const storage = createSqliteStorage(dbPath);
  try {
    const missing: string[] = [];
    for (const id of completed) if (!(await storage.getUsageRecord(id))) missing.push(id);
    assert.deepEqual(missing, [], `${missing.length} of ${completed.length} completed responses have no ledger record`);
  } finally {
    await storage.close();
  }
});
