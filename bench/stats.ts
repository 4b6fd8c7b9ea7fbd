/** Latency percentiles at full (sub-millisecond) precision. */

/** Latency percentiles, ms. */
export interface LatencySummary {
  /** Samples summarised. */
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** The percentiles of `samples` (ms), or null when there are none. */
export function summarise(samples: readonly number[]): LatencySummary | null {
  if (samples.length === 0) return null;
  const sorted = Float64Array.from(samples).sort();
  const at = (fraction: number) => sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))];
  const sum = sorted.reduce((total, value) => total + value, 0);
  return { count: sorted.length, mean: sum / sorted.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted[sorted.length - 1] };
}
