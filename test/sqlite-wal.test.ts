/**
 * The SQLite ledger under steady writes: the write-ahead log is started over again and again, so
 * its file stays bounded instead of growing with every record ever written (it grew to 4 GB in
 * 150 s of the benchmark before), and no record is lost or delayed for good while it happens.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createSqliteStorage } from '../src/storage/sqlite/sqlite-storage.js';
import type { UsageRecord } from '../src/storage/types.js';

function record(index: number): UsageRecord {
  return {
    requestId: `req_wal_${String(index).padStart(8, '0')}`, accountId: 'acct_wal', keyId: null,
    model: 'openai/gpt-3.5-turbo-instruct', vendor: 'openai', promptTokens: 10, completionTokens: 5, totalTokens: 15,
    cachedTokens: null, reasoningTokens: null, estimated: false, stream: false, outcome: 'success', status: 200,
    errorCode: null, latencyMs: 1, ttftMs: null, createdAt: new Date(Date.UTC(2030, 0, 1, 0, 0, 0, index)).toISOString(),
  };
}

test('steady ledger writes: the WAL file stays bounded and every record is kept', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-wal-'));
  const path = join(dir, 'ledger.db');
  // 256 frames (1 MiB) instead of 64 MiB and a check every 10 ms instead of 250, so a few
  // thousand commits (written as fast as the disk takes them) go through many restarts.
  const storage = createSqliteStorage(path, { walRestartFrames: 256, walCheckpointIntervalMs: 10 });
  try {
    await storage.migrate();
    await new Promise((resolve) => setTimeout(resolve, 300)); // the checkpoint worker starting
    let largest = 0;
    const commits = 3_000;
    for (let batch = 0; batch < commits; batch++) {
      // Four records finishing in the same turn share one commit, as under load.
      const results = await Promise.all([0, 1, 2, 3].map((offset) => storage.recordUsage(record(batch * 4 + offset))));
      assert.ok(results.every(Boolean));
      if (batch % 50 === 0) {
        largest = Math.max(largest, statSync(`${path}-wal`).size);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    }
    largest = Math.max(largest, statSync(`${path}-wal`).size);
    const report = await storage.queryUsage({ accountId: 'acct_wal' });
    assert.equal(report.totals.requests, commits * 4);
    // Without restarts the log holds every commit's pages: well over 20 MiB here.
    assert.ok(largest < 8 * 1024 * 1024, `WAL file reached ${(largest / 1048576).toFixed(1)} MiB`);
  } finally {
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
