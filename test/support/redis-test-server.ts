/**
 * The Redis server tests share (override with TOLLGATE_TEST_REDIS_URL). Tests keep apart by key
 * prefix, never by flushing, so a developer's data on the same server is left alone.
 */
export const REDIS_URL = process.env.TOLLGATE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Null when the server answers; otherwise why not, for the skip or failure message. */
export async function redisUnavailableReason(): Promise<string | null> {
  const { Redis } = await import('ioredis');
  const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
    return null;
  } catch (error) {
    return `Redis is not reachable at ${REDIS_URL}: ${(error as Error).message}`;
  } finally {
    client.disconnect();
  }
}
