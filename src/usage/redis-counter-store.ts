/**
 * CounterStore on Redis: the check-and-add is one Lua script, so every worker and instance sees
 * one atomic counter. Fails fast while Redis is away (no offline queue) and reconnects by itself.
 */
import { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.js';
import type { CounterChange, CounterReservation, CounterStore, ReserveResult } from './counter-store.js';

// Shared by both scripts. ARGV[1] is now (epoch ms); then four per key: amount, limit,
// expiresAt (0: never) and drain per ms (0: a period counter, a plain integer string; else a
// rate counter, a hash of level l at time t). Levels go back as strings: Redis would truncate
// a Lua number to an integer. Written with 17 digits: Lua's tostring keeps 14, which rounds a
// count of nanodollars past 10^14 (a $100,000 budget).
const COMMON = `
local now = tonumber(ARGV[1])
local function text(value) return string.format('%.17g', value) end
local function arg(i, k) return tonumber(ARGV[1 + (i - 1) * 4 + k]) end
local function level(i)
  local drain = arg(i, 4)
  if drain <= 0 then return tonumber(redis.call('GET', KEYS[i]) or '0') end
  local state = redis.call('HMGET', KEYS[i], 'l', 't')
  local value = tonumber(state[1] or '0')
  local elapsed = now - tonumber(state[2] or now)
  if elapsed > 0 then value = value - elapsed * drain end
  if value < 0 then return 0 end
  return value
end
local function put(i, value)
  local drain = arg(i, 4)
  if value < 0 then value = 0 end
  if drain > 0 then
    redis.call('HSET', KEYS[i], 'l', text(value), 't', text(now))
    redis.call('PEXPIREAT', KEYS[i], now + math.ceil(value / drain) + 1)
  else
    redis.call('SET', KEYS[i], text(value))
    local expires = arg(i, 3)
    if expires > 0 then redis.call('PEXPIREAT', KEYS[i], expires) end
  end
  return text(value)
end
`;

const RESERVE = `${COMMON}
local levels = {}
for i = 1, #KEYS do
  levels[i] = level(i)
  if levels[i] + arg(i, 1) > arg(i, 2) then return {0, i - 1, text(levels[i])} end
end
local values = {1}
for i = 1, #KEYS do values[i + 1] = put(i, levels[i] + arg(i, 1)) end
return values
`;

const ADD = `${COMMON}
for i = 1, #KEYS do put(i, level(i) + arg(i, 1)) end
return 1
`;

type ScriptedRedis = Redis & {
  tollgateReserve(keyCount: number, ...args: (string | number)[]): Promise<(string | number)[]>;
  tollgateAdd(keyCount: number, ...args: (string | number)[]): Promise<number>;
};

export class RedisCounterStore implements CounterStore {
  private readonly redis: ScriptedRedis;

  constructor(
    url: string,
    logger: Logger,
    private readonly prefix = 'tollgate:',
  ) {
    const redis = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2_000,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
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

  async tryReserve(items: CounterReservation[], now: number): Promise<ReserveResult> {
    if (items.length === 0) return { ok: true, values: [] };
    const reply = await this.redis.tollgateReserve(items.length, ...this.keys(items), ...scriptArgs(items, now));
    if (Number(reply[0]) === 1) return { ok: true, values: reply.slice(1).map(Number) };
    return { ok: false, index: Number(reply[1]), value: Number(reply[2]) };
  }

  async add(items: CounterChange[], now: number): Promise<void> {
    if (items.length === 0) return;
    await this.redis.tollgateAdd(items.length, ...this.keys(items), ...scriptArgs(items, now));
  }

  private keys(items: CounterChange[]): string[] {
    return items.map((item) => this.prefix + item.key);
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

function scriptArgs(items: (CounterChange & { limit?: number })[], now: number): number[] {
  const args = [now];
  for (const item of items) args.push(item.amount, item.limit ?? 0, item.expiresAt ?? 0, item.drainPerMs ?? 0);
  return args;
}
