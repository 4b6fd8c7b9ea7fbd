/** Messages between the benchmark and its load-generator child (bench/load.ts) over IPC. */
import type { LatencySummary } from './stats.js';

export interface Target {
  /** Full URL of the completions endpoint. */
  url: string;
  headers: Record<string, string>;
}

/** Closed-loop HTTP load with autocannon: `connections` in flight, each sending back to back. */
export interface CannonJob {
  kind: 'cannon';
  target: Target;
  /** Request bodies, cycled per connection (one entry = the same request every time). */
  bodies: string[];
  connections: number;
  durationS: number;
  warmupS: number;
  /** Keep per-request latencies (off for long soaks). */
  recordLatency: boolean;
}

/** Streams through an undici Pool, timing the first body byte and the end of each response. */
export interface TtfbJob {
  kind: 'ttfb';
  target: Target;
  body: string;
  connections: number;
  durationS: number;
  warmupS: number;
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

/** Generates with `concurrency` streams back to back for `durationS`, counting tokens from usage. */
export interface TokensJob {
  kind: 'tokens';
  target: Target;
  body: string;
  concurrency: number;
  durationS: number;
}

export type LoadJob = CannonJob | TtfbJob | SlowJob | TokensJob;

export interface CannonResult {
  kind: 'cannon';
  /** Seconds actually measured. */
  durationS: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  requestsPerSecond: number;
  latency: LatencySummary | null;
}

export interface TtfbResult {
  kind: 'ttfb';
  ok: number;
  failed: number;
  requestsPerSecond: number;
  /** Request sent → first body byte, ms. */
  ttfb: LatencySummary | null;
  /** Request sent → last byte, ms. */
  total: LatencySummary | null;
  /** The gateway's CPU per stream and share of its core in the measured window (set by the benchmark, not the load client). */
  cpuMicrosPerRequest?: number;
  cpuUtilisation?: number;
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

export interface TokensResult {
  kind: 'tokens';
  streams: number;
  failed: number;
  completionTokens: number;
  wallS: number;
  /** All streams together, tokens per second of wall time. */
  tokensPerSecond: number;
  /** Mean over streams of tokens / stream duration. */
  perStreamTokensPerSecond: number;
  /** Request → first body byte, ms. */
  firstByte: LatencySummary | null;
  firstError: string | null;
}

export type LoadResult = CannonResult | TtfbResult | SlowResult | TokensResult;

/** Child → parent. `measuring`: warm-up done, the measured window starts now. `open`: all slow streams are open. */
export type LoadMessage =
  | { type: 'ready' }
  | { type: 'measuring' }
  | { type: 'open'; opened: number; failed: number }
  | { type: 'result'; result: LoadResult }
  | { type: 'error'; message: string };
