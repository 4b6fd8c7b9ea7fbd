/**
 * Closed-loop HTTP load with autocannon: `connections` in flight, each sending back to back. Its
 * latency histogram has 1 ms resolution, too coarse for sub-millisecond overheads, so every
 * response time is also kept here at full precision.
 */
import { createRequire } from 'node:module';
import { summarise, type LatencySummary } from './stats.js';

/** Where the load goes. */
export interface Target {
  /** Full URL of the completions endpoint. */
  url: string;
  headers: Record<string, string>;
}

/** One closed-loop run. */
export interface CannonJob {
  target: Target;
  /** Request bodies, cycled per connection (one entry: the same request every time). */
  bodies: string[];
  connections: number;
  durationS: number;
  warmupS: number;
  /** Keep per-request latencies (off for long soaks). */
  recordLatency: boolean;
  /** Called when the warm-up is over and the measured window starts. */
  onMeasuring?: () => void;
}

/** What the measured window saw. */
export interface CannonResult {
  /** 2xx responses. */
  ok: number;
  /** Other statuses, errors and timeouts. */
  failed: number;
  requestsPerSecond: number;
  latency: LatencySummary | null;
}

/** The part of autocannon's API used here (it ships no types). */
interface AutocannonOptions {
  url: string;
  connections: number;
  duration: number;
  method: string;
  headers: Record<string, string>;
  requests: { method: string; body: string; headers: Record<string, string> }[];
  timeout: number;
}
interface AutocannonResult {
  '2xx': number;
  non2xx: number;
  errors: number;
  timeouts: number;
}
interface AutocannonInstance {
  on(event: 'response', listener: (client: unknown, statusCode: number, bytes: number, responseTimeMs: number) => void): void;
  stop(): void;
}
type Autocannon = (options: AutocannonOptions, done: (error: Error | null, result: AutocannonResult) => void) => AutocannonInstance;

const autocannon: Autocannon = createRequire(import.meta.url)('autocannon');

function cannon(job: CannonJob, durationS: number, latencies: number[] | null): Promise<AutocannonResult> {
  return new Promise((resolve, reject) => {
    const headers = { 'content-type': 'application/json', ...job.target.headers };
    const instance = autocannon(
      {
        url: job.target.url,
        connections: job.connections,
        duration: durationS,
        method: 'POST',
        headers,
        requests: job.bodies.map((body) => ({ method: 'POST', body, headers })),
        timeout: 30,
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
    if (latencies) {
      instance.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
        if (statusCode >= 200 && statusCode < 300) latencies.push(responseTimeMs);
      });
    }
    // Bounded even if autocannon misbehaves.
    setTimeout(() => instance.stop(), (durationS + 30) * 1000).unref();
  });
}

export async function runCannon(job: CannonJob): Promise<CannonResult> {
  if (job.warmupS > 0) {
    await cannon(job, job.warmupS, null);
    // Stopping the warm-up cuts its requests in flight; the gateway settles them (ledger records,
    // one-time loads such as the tokenizer) before the measured window and its first sample.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  job.onMeasuring?.();
  const latencies: number[] | null = job.recordLatency ? [] : null;
  const started = performance.now();
  const result = await cannon(job, job.durationS, latencies);
  // autocannon stops at its next whole-second sample, so a window runs longer than asked unless
  // its length is a whole number of seconds: the rate is over the time it really ran.
  const elapsedS = (performance.now() - started) / 1000;
  return {
    ok: result['2xx'],
    failed: result.non2xx + result.errors + result.timeouts,
    requestsPerSecond: result['2xx'] / elapsedS,
    latency: latencies ? summarise(latencies) : null,
  };
}
