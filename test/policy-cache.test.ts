/** The policy cache: one read per account and key within its time to live, never a failed read kept. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Budget, RateLimit, Storage } from '../src/storage/types.js';
import { PolicyCache } from '../src/usage/policy-cache.js';

/** A storage whose policy reads are counted and can be made to fail. */
function countingStorage() {
  const reads: string[] = [];
  let failing = false;
  const storage = {
    async getBudgets(accountId: string, keyId: string | null): Promise<Budget[]> {
      reads.push(`${accountId}/${keyId ?? '-'}`);
      if (failing) throw new Error('database unavailable');
      return [{ id: `b-${accountId}-${keyId ?? '-'}`, accountId, keyId, period: 'day', tokens: 100 } as unknown as Budget];
    },
    async getRateLimits(): Promise<RateLimit[]> {
      return [];
    },
  } as unknown as Storage;
  return { storage, reads, fail: (value: boolean) => (failing = value) };
}

test('an account and each of its keys are cached apart, and read once within the time to live', async () => {
  const { storage, reads } = countingStorage();
  const cache = new PolicyCache(storage, 60_000);
  const account = await cache.get('acct_1', null);
  const key = await cache.get('acct_1', 'key_1');
  assert.notEqual(account.budgets[0], key.budgets[0]);
  assert.equal((await cache.get('acct_1', null)).budgets[0], account.budgets[0]);
  assert.equal((await cache.get('acct_1', 'key_1')).budgets[0], key.budgets[0]);
  await cache.get('acct_2', 'key_1');
  assert.deepEqual(reads, ['acct_1/-', 'acct_1/key_1', 'acct_2/key_1']);
  cache.invalidate();
  await cache.get('acct_1', 'key_1');
  assert.deepEqual(reads.slice(3), ['acct_1/key_1']);
});

test('a failed read is not kept: the next request reads again', async () => {
  const { storage, reads, fail } = countingStorage();
  const cache = new PolicyCache(storage, 60_000);
  fail(true);
  await assert.rejects(cache.get('acct_1', 'key_1'), /database unavailable/);
  fail(false);
  const policies = await cache.get('acct_1', 'key_1');
  assert.equal(policies.budgets.length, 1);
  await cache.get('acct_1', 'key_1');
  assert.deepEqual(reads, ['acct_1/key_1', 'acct_1/key_1']);
});

test('with no time to live every request reads', async () => {
  const { storage, reads } = countingStorage();
  const cache = new PolicyCache(storage, 0);
  await cache.get('acct_1', null);
  await cache.get('acct_1', null);
  assert.equal(reads.length, 2);
});
