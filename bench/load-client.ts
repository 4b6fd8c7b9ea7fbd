/** The benchmark's side of the load-generator child: start it, hand it jobs, await results. */
import { fileURLToPath } from 'node:url';
import type { LoadJob, LoadMessage, LoadResult } from './load-protocol.js';
import { spawnProcess, type BenchProcess } from './processes.js';

export interface JobHooks {
  /** Warm-up is over; the measured window starts. */
  onMeasuring?: () => void;
  /** All slow streams are open (or the open timeout passed). */
  onOpen?: (opened: number, failed: number) => void;
}

export interface LoadClient {
  process: BenchProcess;
  run<T extends LoadResult>(job: LoadJob, timeoutMs: number, hooks?: JobHooks): Promise<T>;
  stop(): Promise<void>;
}

export async function startLoadClient(core: number | null): Promise<LoadClient> {
  const script = fileURLToPath(new URL('./load.js', import.meta.url));
  const child = spawnProcess({ name: 'load generator', core, args: ['--max-old-space-size=2048', script], ipc: true });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`load generator did not start:\n${child.output()}`)), 15_000);
    child.child.once('message', () => { clearTimeout(timer); resolve(); });
    child.child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`load generator exited (${code}):\n${child.output()}`)); });
  });
  return {
    process: child,
    run<T extends LoadResult>(job: LoadJob, timeoutMs: number, hooks: JobHooks = {}) {
      return new Promise<T>((resolve, reject) => {
        const finish = (error: Error | null, result?: LoadResult) => {
          clearTimeout(timer);
          child.child.off('message', onMessage);
          child.child.off('exit', onExit);
          if (error) reject(error);
          else resolve(result as T);
        };
        const onMessage = (message: LoadMessage) => {
          if (message.type === 'measuring') hooks.onMeasuring?.();
          else if (message.type === 'open') hooks.onOpen?.(message.opened, message.failed);
          else if (message.type === 'result') finish(null, message.result);
          else if (message.type === 'error') finish(new Error(`load generator: ${message.message}`));
        };
        const onExit = (code: number | null) => finish(new Error(`load generator exited (${code}):\n${child.output()}`));
        const timer = setTimeout(() => finish(new Error(`${job.kind} job did not finish within ${timeoutMs} ms`)), timeoutMs);
        child.child.on('message', onMessage);
        child.child.once('exit', onExit);
        child.child.send(job);
      });
    },
    stop: () => child.stop(2_000),
  };
}
