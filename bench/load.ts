/**
 * The load generator, a child process of the benchmark pinned next to the mock, away from the
 * gateway. It takes one job at a time over IPC and answers with its result. Closed-loop HTTP load
 * is autocannon's; its latency histogram has 1 ms resolution, too coarse for sub-millisecond
 * overheads, so every response time is also kept here at full precision.
 */
import { createRequire } from 'node:module';
import type { CannonJob, CannonResult, LoadJob, LoadMessage, LoadResult } from './load-protocol.js';
import { runSlowStreams } from './load-slow-streams.js';
import { summarise } from './stats.js';

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
interface AutocannonResult { '2xx': number; non2xx: number; errors: number; timeouts: number }
interface AutocannonInstance {
  on(event: 'response', listener: (client: unknown, statusCode: number, bytes: number, responseTimeMs: number) => void): void;
  stop(): void;
}
type Autocannon = (options: AutocannonOptions, done: (error: Error | null, result: AutocannonResult) => void) => AutocannonInstance;

const autocannon: Autocannon = createRequire(import.meta.url)('autocannon');

const send = (message: LoadMessage) => process.send?.(message);

function cannon(job: CannonJob, durationS: number, latencies: number[] | null): Promise<AutocannonResult> {
  return new Promise((resolve, reject) => {
    const headers = { 'content-type': 'application/json', ...job.target.headers };
    const instance = autocannon({
      url: job.target.url,
      connections: job.connections,
      duration: durationS,
      method: 'POST',
      headers,
      requests: job.bodies.map((body) => ({ method: 'POST', body, headers })),
      timeout: 30,
    }, (error, result) => (error ? reject(error) : resolve(result)));
    if (latencies) {
      instance.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
        if (statusCode >= 200 && statusCode < 300) latencies.push(responseTimeMs);
      });
    }
    // Bounded even if autocannon misbehaves.
    setTimeout(() => instance.stop(), (durationS + 30) * 1000).unref();
  });
}

async function runCannon(job: CannonJob): Promise<CannonResult> {
  if (job.warmupS > 0) {
    await cannon(job, job.warmupS, null);
    // Stopping the warm-up cuts its requests in flight; the gateway settles them (ledger records,
    // one-time loads such as the tokenizer) before the measured window and its first sample.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  send({ type: 'measuring' });
  const latencies: number[] | null = job.recordLatency ? [] : null;
  const result = await cannon(job, job.durationS, latencies);
  return {
    kind: 'cannon',
    ok: result['2xx'],
    failed: result.non2xx + result.errors + result.timeouts,
    requestsPerSecond: result['2xx'] / job.durationS,
    latency: latencies ? summarise(latencies) : null,
  };
}

function run(job: LoadJob): Promise<LoadResult> {
  return job.kind === 'cannon' ? runCannon(job) : runSlowStreams(job, () => send({ type: 'open' }));
}

let busy = false;
process.on('message', (job: LoadJob) => {
  if (busy) return send({ type: 'error', message: 'a job is already running' });
  busy = true;
  run(job).then(
    (result) => send({ type: 'result', result }),
    (error: unknown) => send({ type: 'error', message: (error as Error).stack ?? String(error) }),
  ).finally(() => { busy = false; });
});
process.on('disconnect', () => process.exit(0));
send({ type: 'ready' });
