/** Picks the admission backend: in-process counters, or Redis when REDIS_URL is set. */
import type { Config } from '../config/config.js';
import type { Logger } from '../observability/logger.js';
import type { Storage } from '../storage/types.js';
import type { Admission } from './admission.js';
import { MemoryCounterStore, type CounterStore } from './counter-store.js';
import { QuotaAdmission } from './quota-admission.js';
import cluster from 'node:cluster';
import { PrimaryCounterStore } from './primary-counter-store.js';

export async function createAdmission(config: Config, storage: Storage, logger: Logger, counters?: CounterStore): Promise<QuotaAdmission> {
  let store = counters;
  if (!store && config.redisUrl) {
    // Loaded only when configured: the Redis client costs memory a single instance never needs.
    const { RedisCounterStore } = await import('./redis-counter-store.js');
    const redis = new RedisCounterStore(config.redisUrl, logger);
    await redis.ready().catch((error: Error) => logger.warn({ err: error.message }, 'starting without redis; admission answers 503 until it connects'));
    store = redis;
  }
  if (!store && cluster.isWorker) store = new PrimaryCounterStore();
  return new QuotaAdmission({ counters: store ?? new MemoryCounterStore(), storage, logger, policyCacheMs: config.policyCacheMs });
}

export type { Admission };
