/**
 * CounterStore on Redis: the check-and-add is one Lua script, so every worker and instance sees
 * one atomic counter. Fails fast while Redis is away (no offline queue) and reconnects by itself.
 */
import { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.js';
import type { CounterReservation, CounterStore, ReserveResult } from './counter-store.js';

const RESERVE = `
local n = #KEYS
for i = 1, n do
  local current = tonumber(redis.call('GET', KEYS[i]) or '0')
  if current + tonumber(ARGV[i * 3 - 2]) > tonumber(ARGV[i * 3 - 1]) then
    return {0, i - 1, current}
  end
end
local values = {1}
for i = 1, n do
  values[i + 1] = redis.call('INCRBY', KEYS[i], ARGV[i * 3 - 2])
  local expires = tonumber(ARGV[i * 3])
  if expires > 0 then redis.call('PEXPIREAT', KEYS[i], expires) end
end
return values
`;

const ADD = `
for i = 1, #KEYS do
  redis.call('INCRBY', KEYS[i], ARGV[i * 2 - 1])
  local expires = tonumber(ARGV[i * 2])
  if expires > 0 then redis.call('PEXPIREAT', KEYS[i], expires) end
end
return 1
`;

type ScriptedRedis = Redis & {
  tollgateReserve(keyCount: number, ...args: (string | number)[]): Promise<number[]>;
  tollgateAdd(keyCount: number, ...args: (string | number)[]): Promise<number>;
};

export class RedisCounterStore implements CounterStore {
  private readonly redis: ScriptedRedis;
  private readonly prefix: string;

  constructor(url: string, logger: Logger, prefix = 'tollgate:') {
    this.prefix = prefix;
    const redis = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2_000,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
      lazyConnect: false,
    });
    let reported = false;
    redis.on('error', (error) => {
      if (!reported) logger.warn({ err: error.message }, 'redis unavailable; admission answers 503 until it is back');
      reported = true;
    });
    redis.on('ready', () => {
      if (reported) logger.info('redis is back');
      reported = false;
    });
    redis.defineCommand('tollgateReserve', { lua: RESERVE });
    redis.defineCommand('tollgateAdd', { lua: ADD });
    this.redis = redis as ScriptedRedis;
  }

  /** Resolves once connected (start-up waits for it so the first request does not fail). */
  async ready(timeoutMs = 5_000): Promise<void> {
    if (this.redis.status === 'ready') return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('redis did not become ready')), timeoutMs);
      this.redis.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  async tryReserve(items: CounterReservation[]): Promise<ReserveResult> {
    if (items.length === 0) return { ok: true, values: [] };
    const args = items.flatMap((item) => [Math.round(item.amount), Math.round(item.limit), item.expiresAt ?? 0]);
    const reply = await this.redis.tollgateReserve(items.length, ...items.map((item) => this.prefix + item.key), ...args);
    if (Number(reply[0]) === 1) return { ok: true, values: reply.slice(1).map(Number) };
    return { ok: false, index: Number(reply[1]), value: Number(reply[2]) };
  }

  async add(items: { key: string; amount: number; expiresAt: number | null }[]): Promise<void> {
    if (items.length === 0) return;
    const args = items.flatMap((item) => [Math.round(item.amount), item.expiresAt ?? 0]);
    await this.redis.tollgateAdd(items.length, ...items.map((item) => this.prefix + item.key), ...args);
  }

  async seed(key: string, value: number, expiresAt: number | null): Promise<boolean> {
    const result = expiresAt
      ? await this.redis.set(this.prefix + key, Math.round(value), 'PXAT', expiresAt, 'NX')
      : await this.redis.set(this.prefix + key, Math.round(value), 'NX');
    return result === 'OK';
  }

  async has(key: string): Promise<boolean> {
    return (await this.redis.exists(this.prefix + key)) === 1;
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
