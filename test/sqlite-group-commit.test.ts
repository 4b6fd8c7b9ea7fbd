/**
 * The SQLite ledger's group commit: records of consecutive busy turns share a commit; a record alone
 * in its turn does not wait. A turn here is one `setImmediate` hop, as between two I/O phases.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageBatch } from '../src/storage/sqlite/sqlite-usage-batch.js';
import type { UsageRecord } from '../src/storage/types.js';
import { usageRecord } from './support/usage-record.js';

function record(requestId: string): UsageRecord {
  return usageRecord({ requestId, accountId: 'acct_group', promptTokens: 7, completionTokens: 3, totalTokens: 10 });
}

/** A batch over a fake commit that records each commit's request ids. */
function batchRecordingCommits(groupWaitMs: number) {
  const commits: string[][] = [];
  const batch = new UsageBatch(
    (records) => {
      commits.push(records.map((each) => each.requestId));
      return records.map(() => true);
    },
    1_000,
    groupWaitMs,
  );
  return { batch, commits };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

test('a lone record commits at the next turn, alone', async () => {
  const { batch, commits } = batchRecordingCommits(50);
  const written = batch.add(record('req_lone'));
  await nextTurn();
  assert.deepEqual(commits, [['req_lone']], 'committed by the first turn after it was queued');
  assert.equal(await written, true);
});

test('records that arrive in consecutive turns share one commit, and each waiter learns it was written', async () => {
  const { batch, commits } = batchRecordingCommits(50);
  const writes: Promise<boolean>[] = [];
  for (let turn = 0; turn < 5; turn++) {
    writes.push(batch.add(record(`req_${turn}a`)), batch.add(record(`req_${turn}b`)));
    await nextTurn();
  }
  assert.deepEqual(await Promise.all(writes), Array(10).fill(true));
  assert.equal(commits.length, 1, `one commit, not ${commits.length}`);
  assert.deepEqual(commits[0], ['req_0a', 'req_0b', 'req_1a', 'req_1b', 'req_2a', 'req_2b', 'req_3a', 'req_3b', 'req_4a', 'req_4b']);
});

test('records arriving in every turn still commit within the wait: no batch waits much past it', async () => {
  const { batch, commits } = batchRecordingCommits(5);
  const writes: Promise<boolean>[] = [];
  const waits: number[] = [];
  const started = performance.now();
  while (performance.now() - started < 60) {
    const queuedAt = performance.now();
    for (let pair = 0; pair < 2; pair++) {
      writes.push(
        batch.add(record(`req_${writes.length}`)).then((inserted) => {
          waits.push(performance.now() - queuedAt);
          return inserted;
        }),
      );
    }
    await nextTurn();
  }
  await Promise.all(writes);
  assert.ok(commits.length >= 5, `${commits.length} commits in 60 ms with a 5 ms wait`);
  assert.equal(commits.flat().length, writes.length, 'every record committed once');
  assert.ok(
    commits.some((each) => each.length > 1),
    'records of consecutive turns were grouped',
  );
  // The wait is checked at each turn, so a record waits at most the wait plus about a turn.
  assert.ok(Math.max(...waits) < 40, `a record waited ${Math.max(...waits).toFixed(1)} ms`);
});
