/**
 * The load generator, a child process of the benchmark (pinned next to the mock, away from the
 * gateway). Takes one job at a time over IPC and answers with its result. Closed-loop HTTP load
 * is autocannon's; its latency histogram has 1 ms resolution, too coarse for sub-millisecond
 * overheads, so every response time is also kept here at full precision.
 */
import { createRequire } from 'node:module';
import type { CannonJob, CannonResult, LoadJob, LoadMessage, LoadResult } from './load-protocol.js';
import { runSlow, runTokens, runTtfb } from './load-streams.js';
import { Samples } from './stats.js';

interface AutocannonRequest { method: string; body: string; headers: Record<string, string> }
interface AutocannonOptions {
  url: string;
  connections: number;
  duration: number;
  method: string;
  headers: Record<string, string>;
  requests: AutocannonRequest[];
  timeout: number;
}
interface AutocannonRaw { duration: number; '2xx': number; non2xx: number; errors: number; timeouts: number }
interface AutocannonInstance {
  on(event: 'response', listener: (client: unknown, statusCode: number, bytes: number, responseTimeMs: number) => void): void;
  stop(): void;
}
type Autocannon = (options: AutocannonOptions, done: (error: Error | null, result: AutocannonRaw) => void) => AutocannonInstance;

const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

function send(message: LoadMessage): void {
  process.send?.(message);
}

function cannon(job: CannonJob, durationS: number, samples: Samples | null): Promise<AutocannonRaw> {
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
    if (samples) {
      instance.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
        if (statusCode >= 200 && statusCode < 300) samples.add(responseTimeMs);
      });
    }
    // Bounded even if autocannon misbehaves.
    setTimeout(() => instance.stop(), (durationS + 30) * 1000).unref();
  });
}

const settleMs = 1_000;

async function runCannon(job: CannonJob): Promise<CannonResult> {
  if (job.warmupS > 0) {
    await cannon(job, job.warmupS, null);
    // Stopping the warm-up cuts its in-flight requests; the gateway settles them (estimates, ledger
    // records, one-time loads such as the tokenizer) before the measured run and its first sample.
    await new Promise((resolve) => setTimeout(resolve, settleMs));
  }
  send({ type: 'measuring' });
  const samples = job.recordLatency ? new Samples() : null;
  const started = performance.now();
  const raw = await cannon(job, job.durationS, samples);
  const durationS = (performance.now() - started) / 1000;
  return {
    kind: 'cannon',
    durationS,
    ok: raw['2xx'],
    non2xx: raw.non2xx,
    errors: raw.errors,
    timeouts: raw.timeouts,
    requestsPerSecond: raw['2xx'] / job.durationS,
    latency: samples?.summary() ?? null,
  };
}

async function run(job: LoadJob): Promise<LoadResult> {
  switch (job.kind) {
    case 'cannon': return runCannon(job);
    case 'ttfb': return runTtfb(job, () => send({ type: 'measuring' }));
    case 'slow': return runSlow(job, (opened, failed) => send({ type: 'open', opened, failed }));
    case 'tokens': return runTokens(job);
  }
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
