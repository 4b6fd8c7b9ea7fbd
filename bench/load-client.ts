/** The benchmark's side of the load-generator child: start it, hand it jobs, await their results. */
import { fileURLToPath } from 'node:url';
import type { CannonJob, CannonResult, LoadJob, LoadMessage, LoadResult, SlowJob, SlowResult } from './load-protocol.js';
import { spawnProcess, type BenchProcess } from './processes.js';

/** Called while a job runs. */
export interface JobHooks {
  /** Warm-up is over; the measured window starts. */
  onMeasuring?: () => void;
  /** All slow streams are open (or the open timeout passed). */
  onOpen?: () => void;
}

/** The load generator, one job at a time. */
export interface LoadClient {
  process: BenchProcess;
  cannon(job: CannonJob, timeoutMs: number, hooks?: JobHooks): Promise<CannonResult>;
  slowStreams(job: SlowJob, timeoutMs: number, hooks?: JobHooks): Promise<SlowResult>;
  stop(): Promise<void>;
}

export async function startLoadClient(core: number | null): Promise<LoadClient> {
  const script = fileURLToPath(new URL('./load.js', import.meta.url));
  const load = spawnProcess({ name: 'load generator', core, args: ['--max-old-space-size=2048', script], ipc: true });
  const { child } = load;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`load generator did not start:\n${load.output()}`)), 15_000);
    child.once('message', () => { clearTimeout(timer); resolve(); });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`load generator exited (${code}):\n${load.output()}`)); });
  });
  function run(job: LoadJob, timeoutMs: number, hooks: JobHooks = {}): Promise<LoadResult> {
    return new Promise((resolve, reject) => {
      const finish = (error: Error | null, result?: LoadResult) => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        if (result) resolve(result);
        else reject(error ?? new Error(`${job.kind} job ended without a result`));
      };
      const onMessage = (message: LoadMessage) => {
        if (message.type === 'measuring') hooks.onMeasuring?.();
        else if (message.type === 'open') hooks.onOpen?.();
        else if (message.type === 'result') finish(null, message.result);
        else if (message.type === 'error') finish(new Error(`load generator: ${message.message}`));
      };
      const onExit = (code: number | null) => finish(new Error(`load generator exited (${code}):\n${load.output()}`));
      const timer = setTimeout(() => finish(new Error(`${job.kind} job did not finish within ${timeoutMs} ms`)), timeoutMs);
      child.on('message', onMessage);
      child.once('exit', onExit);
      child.send(job);
    });
  }
  return {
    process: load,
    async cannon(job, timeoutMs, hooks) {
      const result = await run(job, timeoutMs, hooks);
      if (result.kind !== 'cannon') throw new Error(`load generator answered a cannon job with ${result.kind}`);
      return result;
    },
    async slowStreams(job, timeoutMs, hooks) {
      const result = await run(job, timeoutMs, hooks);
      if (result.kind !== 'slow') throw new Error(`load generator answered a slow job with ${result.kind}`);
      return result;
    },
    stop: () => load.stop(2_000),
  };
}
