/** Latency samples and their percentiles, at full (sub-millisecond) precision. */

/** A bounded, growable list of samples in ms; past `limit` it keeps counting but stops storing. */
export class Samples {
  private values: Float64Array;
  private length = 0;
  /** Samples offered, including those not stored. */
  count = 0;

  constructor(private readonly limit = 5_000_000) {
    this.values = new Float64Array(Math.min(65_536, limit));
  }

  add(value: number): void {
    this.count++;
    if (this.length === this.limit) return;
    if (this.length === this.values.length) {
      const grown = new Float64Array(Math.min(this.values.length * 2, this.limit));
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.length++] = value;
  }

  summary(): LatencySummary | null {
    if (this.length === 0) return null;
    const sorted = this.values.slice(0, this.length).sort();
    const at = (fraction: number) => sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))];
    let sum = 0;
    for (const value of sorted) sum += value;
    return { count: this.count, mean: sum / sorted.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted[sorted.length - 1] };
  }
}

/** Latency percentiles, ms. */
export interface LatencySummary {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}
