/**
 * A ledger commit that finds the SQLite write lock taken (another cluster worker committing, a
 * checkpoint starting the log over, an admin command) waits off the event loop: other work keeps
 * running, the record commits once the lock is free, and a lock that never comes free fails the
 * commit after the limit instead of hanging it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { createSqliteStorage } from '../src/storage/sqlite/sqlite-storage.js';
import type { UsageRecord } from '../src/storage/types.js';
import { usageRecord } from './support/usage-record.js';

function record(requestId: string): UsageRecord {
  return usageRecord({ requestId, accountId: 'acct_busy', promptTokens: 7, completionTokens: 3, totalTokens: 10 });
}

/** Another connection to the same file (another process, as far as SQLite's locks go) holding the write lock. */
function takeWriteLock(path: string): Database.Database {
  const other = new Database(path);
  other.exec('BEGIN IMMEDIATE');
  return other;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('a ledger commit waits for a taken write lock without blocking the event loop, then commits', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-busy-'));
  const path = join(dir, 'ledger.db');
  const storage = createSqliteStorage(path);
  try {
    await storage.migrate();
    const other = takeWriteLock(path);
    let settled = false;
    const writing = storage.recordUsage(record('req_busy_1')).finally(() => {
      settled = true;
    });
    // Timers keep firing while the commit waits: SQLite's own busy wait would have frozen this loop
    // until its timeout, and the lock below could never have been let go.
    let ticks = 0;
    for (let index = 0; index < 10; index++) {
      await sleep(20);
      ticks++;
    }
    assert.equal(ticks, 10);
    assert.equal(settled, false, 'the commit cannot have happened while the lock was held');
    other.exec('COMMIT');
    other.close();
    assert.equal(await writing, true);
    const stored = await storage.getUsageRecord('req_busy_1');
    assert.equal(stored?.totalTokens, 10);
    // Records that arrive together with or after the retried one commit as usual.
    assert.deepEqual(await Promise.all([storage.recordUsage(record('req_busy_2')), storage.recordUsage(record('req_busy_1'))]), [true, false]);
  } finally {
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a write lock held past the limit fails the commit (the ledger reports it) and nothing half-written remains', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-busy-'));
  const path = join(dir, 'ledger.db');
  const storage = createSqliteStorage(path, { ledgerBusyLimitMs: 150 });
  try {
    await storage.migrate();
    const other = takeWriteLock(path);
    const started = performance.now();
    await assert.rejects(storage.recordUsage(record('req_busy_late')), (error: { code?: string }) => error.code?.startsWith('SQLITE_BUSY') === true);
    assert.ok(performance.now() - started >= 150, 'retried until the limit');
    other.exec('ROLLBACK');
    other.close();
    assert.equal(await storage.getUsageRecord('req_busy_late'), null);
    // The lock is free again: the same record (the ledger retries it) commits once.
    assert.equal(await storage.recordUsage(record('req_busy_late')), true);
    assert.equal((await storage.queryUsage({ accountId: 'acct_busy' })).totals.requests, 1);
  } finally {
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
