/** Jobs, results and messages between the benchmark and its load-generator child (bench/load.ts), over IPC. */
import type { LatencySummary } from './stats.js';

/** Where the load goes. */
export interface Target {
  /** Full URL of the completions endpoint. */
  url: string;
  headers: Record<string, string>;
}

/** Closed-loop HTTP load with autocannon: `connections` in flight, each sending back to back. */
export interface CannonJob {
  kind: 'cannon';
  target: Target;
  /** Request bodies, cycled per connection (one entry: the same request every time). */
  bodies: string[];
  connections: number;
  durationS: number;
  warmupS: number;
  /** Keep per-request latencies (off for long soaks). */
  recordLatency: boolean;
}

/** Opens `count` slow streams at once, reports when all are open, holds them, then aborts them. */
export interface SlowJob {
  kind: 'slow';
  target: Target;
  body: string;
  count: number;
  openTimeoutS: number;
  holdS: number;
}

export type LoadJob = CannonJob | SlowJob;

export interface CannonResult {
  kind: 'cannon';
  /** 2xx responses in the measured window. */
  ok: number;
  /** Other statuses, errors and timeouts. */
  failed: number;
  requestsPerSecond: number;
  latency: LatencySummary | null;
}

export interface SlowResult {
  kind: 'slow';
  opened: number;
  failed: number;
  /** Streams that ended before the hold was over (should be 0). */
  endedEarly: number;
  /** From the first request to the last stream's first byte, ms. */
  openMs: number;
  firstError: string | null;
}

export type LoadResult = CannonResult | SlowResult;

/** Child → parent. `measuring`: warm-up done, the measured window starts now. `open`: all slow streams are open. */
export type LoadMessage =
  | { type: 'ready' }
  | { type: 'measuring' }
  | { type: 'open' }
  | { type: 'result'; result: LoadResult }
  | { type: 'error'; message: string };
