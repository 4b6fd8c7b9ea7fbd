/** Picks admission's counters: Redis when REDIS_URL is set, else the cluster primary's in a worker, else this process's own. */
import cluster from 'node:cluster';
import type { Config } from '../config/config.js';
import type { Logger } from '../observability/logger.js';
import type { Storage } from '../storage/types.js';
import { MemoryCounterStore, type CounterStore } from './counter-store.js';
import { PrimaryCounterStore } from './primary-counter-store.js';
import { QuotaAdmission } from './quota-admission.js';

export async function createAdmission(config: Config, storage: Storage, logger: Logger): Promise<QuotaAdmission> {
  let counters: CounterStore;
  if (config.redisUrl) {
    // Loaded only when configured: the Redis client costs memory a single instance never needs.
    const { RedisCounterStore } = await import('./redis-counter-store.js');
    const redis = new RedisCounterStore(config.redisUrl, logger);
    await redis.ready().catch((error: Error) => logger.warn({ err: error.message }, 'starting without redis; admission answers 503 until it connects'));
    counters = redis;
  } else counters = cluster.isWorker ? new PrimaryCounterStore() : new MemoryCounterStore();
  return new QuotaAdmission({ counters, storage, logger, policyCacheMs: config.policyCacheMs });
}
