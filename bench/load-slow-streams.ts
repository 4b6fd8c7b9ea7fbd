/** Many streams opened at once on undici, held, then aborted; every wait is bounded. */
import { setMaxListeners } from 'node:events';
import { Pool } from 'undici';
import type { Target } from './load-cannon.js';

/** Opens `count` streams at once, calls `onOpen` when all are open, holds them `holdS`, then aborts them. */
export interface SlowJob {
  target: Target;
  body: string;
  count: number;
  openTimeoutS: number;
  holdS: number;
  onOpen: () => void;
}

/** How the streams fared. */
export interface SlowResult {
  opened: number;
  failed: number;
  /** Streams that ended before the hold was over (should be 0). */
  endedEarly: number;
  /** From the first request to the last stream's first byte, ms. */
  openMs: number;
  firstError: string | null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function openSlowStreams(job: SlowJob): Promise<SlowResult> {
  const url = new URL(job.target.url);
  const pool = new Pool(url.origin, { connections: job.count, pipelining: 1, headersTimeout: 60_000, bodyTimeout: 60_000 });
  const headers = { 'content-type': 'application/json', ...job.target.headers };
  const abort = new AbortController();
  // One signal ends every stream of the run: it has a listener per open stream.
  setMaxListeners(0, abort.signal);
  let opened = 0;
  let failed = 0;
  let endedEarly = 0;
  let holding = true;
  let firstError: string | null = null;
  let lastOpen = 0;
  const started = performance.now();
  let settleAll = () => {};
  const allSettled = new Promise<void>((resolve) => {
    settleAll = resolve;
  });
  const settle = () => {
    if (opened + failed === job.count) settleAll();
  };
  const one = async () => {
    let open = false;
    try {
      const response = await pool.request({ path: url.pathname, method: 'POST', headers, body: job.body, signal: abort.signal });
      if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}: ${(await response.body.text()).slice(0, 200)}`);
      for await (const _chunk of response.body) {
        if (open) continue;
        open = true;
        opened++;
        lastOpen = performance.now();
        settle();
      }
      if (holding) endedEarly++;
    } catch (error) {
      if (abort.signal.aborted || open) return;
      failed++;
      firstError ??= (error as Error).message;
      settle();
    }
  };
  const streams = Array.from({ length: job.count }, one);
  try {
    await Promise.race([allSettled, sleep(job.openTimeoutS * 1000)]);
    job.onOpen();
    await sleep(job.holdS * 1000);
    holding = false;
    abort.abort();
    await Promise.race([Promise.allSettled(streams), sleep(10_000)]);
    return { opened, failed: job.count - opened, endedEarly, openMs: lastOpen - started, firstError };
  } finally {
    await pool.destroy();
  }
}
