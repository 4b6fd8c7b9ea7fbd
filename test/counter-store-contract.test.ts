/**
 * One contract for the rate-limit and budget counters, run against the in-memory store (one
 * process, and the cluster primary) and the Redis store (many instances). Time is passed in, so
 * the refill of a rate limit is checked to the millisecond without waiting for it.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, describe, test } from 'node:test';
import { createLogger } from '../src/observability/logger.js';
import { MemoryCounterStore, type CounterReservation, type CounterStore } from '../src/usage/counter-store.js';
import { RedisCounterStore } from '../src/usage/redis-counter-store.js';
import { REDIS_URL, redisUnavailableReason } from './support/redis-test-server.js';

const redisMissing = await redisUnavailableReason();
const redisSkip = redisMissing && !process.env.CI ? `${redisMissing} (set CI to make this a failure)` : false;
const silent = createLogger('silent', new Writable({ write: (_chunk, _encoding, done) => done() }));

const MINUTE = 60_000;

/** A requests-per-minute limit as the admission asks for it. */
function perMinute(key: string, limit: number, amount = 1): CounterReservation {
  return { key, amount, limit, expiresAt: null, drainPerMs: limit / MINUTE };
}

const stores: [string, () => Promise<CounterStore>, false | string][] = [
  ['memory', async () => new MemoryCounterStore(), false],
  [
    'redis',
    async () => {
      const store = new RedisCounterStore(REDIS_URL, silent, `tollgate-test:${randomBytes(6).toString('hex')}:`);
      await store.ready();
      return store;
    },
    redisSkip,
  ],
];

for (const [name, make, skip] of stores) {
  describe(`counter store contract: ${name}`, { skip }, () => {
    const opened: CounterStore[] = [];
    const open = async () => {
      const store = await make();
      opened.push(store);
      return store;
    };
    after(async () => {
      for (const store of opened) await store.close();
    });

    test('a rate of R per minute: a burst of exactly R passes, then one more every 60/R seconds', async () => {
      const store = await open();
      const t0 = Date.now();
      const values: number[] = [];
      for (let i = 0; i < 7; i++) {
        const result = await store.tryReserve([perMinute('rpm', 7)], t0);
        assert.ok(result.ok, `request ${i + 1} of 7 passes`);
        values.push(result.values[0]);
      }
      assert.deepEqual(values, [1, 2, 3, 4, 5, 6, 7]);
      const refused = await store.tryReserve([perMinute('rpm', 7)], t0 + 1);
      assert.equal(refused.ok, false);
      assert.ok(!refused.ok && refused.index === 0 && refused.value > 6.99 && refused.value <= 7);
      // One request's worth refills in 60/7 s = 8,571.4 ms, not sooner.
      assert.equal((await store.tryReserve([perMinute('rpm', 7)], t0 + 8_571)).ok, false);
      assert.equal((await store.tryReserve([perMinute('rpm', 7)], t0 + 8_572)).ok, true);
      assert.equal((await store.tryReserve([perMinute('rpm', 7)], t0 + 8_573)).ok, false);
    });

    test('no window edge: a full burst just before a minute boundary leaves nothing just after it', async () => {
      const store = await open();
      const boundary = (Math.floor(Date.now() / MINUTE) + 1) * MINUTE;
      for (let i = 0; i < 5; i++) assert.equal((await store.tryReserve([perMinute('edge', 5)], boundary - 5)).ok, true);
      for (let i = 0; i < 5; i++) assert.equal((await store.tryReserve([perMinute('edge', 5)], boundary + 5)).ok, false);
      // After a whole minute the bucket is full again: another burst of 5, and no more.
      for (let i = 0; i < 5; i++) assert.equal((await store.tryReserve([perMinute('edge', 5)], boundary - 5 + MINUTE)).ok, true);
      assert.equal((await store.tryReserve([perMinute('edge', 5)], boundary - 5 + MINUTE)).ok, false);
    });

    test('all or nothing: when one counter would pass its limit, none of them is added to', async () => {
      const store = await open();
      const now = Date.now();
      assert.equal((await store.tryReserve([perMinute('tight', 1)], now)).ok, true);
      const refused = await store.tryReserve([perMinute('roomy', 100, 40), perMinute('tight', 1)], now);
      assert.deepEqual(refused.ok ? null : { index: refused.index, value: refused.value }, { index: 1, value: 1 });
      const roomy = await store.tryReserve([perMinute('roomy', 100, 40)], now);
      assert.deepEqual(roomy, { ok: true, values: [40] });
    });

    test('settling gives back what a reservation did not use, never below zero', async () => {
      const store = await open();
      const now = Date.now();
      assert.equal((await store.tryReserve([perMinute('tpm', 30, 30)], now)).ok, true);
      assert.equal((await store.tryReserve([perMinute('tpm', 30, 5)], now)).ok, false);
      await store.add([{ key: 'tpm', amount: -25, expiresAt: null, drainPerMs: 30 / MINUTE }], now);
      assert.deepEqual(await store.tryReserve([perMinute('tpm', 30, 25)], now), { ok: true, values: [30] });
      await store.add([{ key: 'tpm', amount: -1_000, expiresAt: null, drainPerMs: 30 / MINUTE }], now);
      assert.deepEqual(await store.tryReserve([perMinute('tpm', 30, 30)], now), { ok: true, values: [30] });
    });

    test('fractional levels come back exactly as they were computed', async () => {
      const store = await open();
      const now = Date.now();
      await store.tryReserve([perMinute('frac', 7, 7)], now);
      const result = await store.tryReserve([perMinute('frac', 7, 0)], now + 1_000);
      assert.ok(result.ok);
      assert.ok(Math.abs(result.values[0] - (7 - 7 / 60)) < 1e-9, `level ${result.values[0]}`);
    });

    test('a USD budget in nanodollars stays exact past 10^14 (a $100,000 budget), to 2^53', async () => {
      const store = await open();
      const now = Date.now();
      const limit = 2 ** 53 - 1;
      await store.seed('budget-usd', 123_456_789_012_345, null);
      const item = { key: 'budget-usd', amount: 1, limit, expiresAt: null };
      assert.deepEqual(await store.tryReserve([item], now), { ok: true, values: [123_456_789_012_346] });
      await store.add([{ key: 'budget-usd', amount: 8_765_432_098_765_432, expiresAt: null }], now);
      assert.deepEqual(await store.tryReserve([{ ...item, amount: 3 }], now), { ok: true, values: [8_888_888_887_777_781] });
    });

    test('period counters: seeded once, limited, settled, and dropped when their period ends', async () => {
      const store = await open();
      const now = Date.now();
      // The period must outlast the checks below however slow the machine (Redis expires the key by the wall clock).
      const endsAt = now + 2_000;
      assert.equal(await store.has('budget'), false);
      assert.equal(await store.seed('budget', 90, endsAt), true);
      assert.equal(await store.seed('budget', 0, endsAt), false, 'a second seed does not overwrite');
      assert.equal(await store.has('budget'), true);
      const item = { key: 'budget', amount: 10, limit: 100, expiresAt: endsAt };
      assert.deepEqual(await store.tryReserve([item], now), { ok: true, values: [100] });
      assert.deepEqual(await store.tryReserve([{ ...item, amount: 1 }], now), { ok: false, index: 0, value: 100 });
      await store.add([{ key: 'budget', amount: -4, expiresAt: endsAt }], now);
      assert.deepEqual(await store.tryReserve([{ ...item, amount: 4 }], now), { ok: true, values: [100] });
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, endsAt - Date.now()) + 50));
      assert.equal(await store.has('budget'), false);
    });
  });
}
