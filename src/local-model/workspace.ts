/**
 * Scratch memory for generating one choice: dense arrays over the sampler's indexes (logit-bias.ts),
 * reused step after step so a token costs no allocation. Each sequence borrows one from a pool.
 */
export class LocalWorkspace {
  /** Probability mass of the touched tokens (valid where `stamps[token]` is the current stamp, so nothing is cleared per step). */
  readonly mass: Float64Array;
  readonly stamps: Int32Array;
  /** The tokens touched in the current step, `touchedCount` of them. */
  readonly touched: Int32Array;
  touchedCount = 0;
  /** Sampling weight of the touched tokens in the current step. */
  readonly weights: Float64Array;
  /**
   * Logit adjustment (bias minus penalties) where `adjusted` is 1; `adjustedTokens` lists those. Pooled: 90 KiB of ArrayBuffer
   * per choice is external memory V8 counts towards its next full GC, which then ran every ~100 ms under load.
   */
  readonly adjustments: Float64Array;
  readonly adjusted: Uint8Array;
  readonly adjustedTokens: Int32Array;
  /** Times each token was generated in this choice (for the penalties). */
  readonly generatedCounts: Int32Array;
  /** B of the touched tokens in a prepared step, and their level-1 entry (−1 when absent); see step.ts. */
  readonly base: Float64Array;
  readonly baseEntry: Int32Array;
  /** Max-heap of token ids for top_p, and the nucleus being built. */
  readonly heap: Int32Array;
  readonly nucleusTokens: Int32Array;
  readonly nucleusWeights: Float64Array;
  private stamp = 0;

  constructor(readonly size: number) {
    this.mass = new Float64Array(size);
    this.stamps = new Int32Array(size);
    this.touched = new Int32Array(size);
    this.weights = new Float64Array(size);
    this.adjustments = new Float64Array(size);
    this.adjusted = new Uint8Array(size);
    this.adjustedTokens = new Int32Array(size);
    this.generatedCounts = new Int32Array(size);
    this.base = new Float64Array(size);
    this.baseEntry = new Int32Array(size);
    this.heap = new Int32Array(size);
    this.nucleusTokens = new Int32Array(size);
    this.nucleusWeights = new Float64Array(size);
  }

  nextStamp(): number {
    if (this.stamp === 0x7fffffff) {
      this.stamps.fill(0);
      this.stamp = 0;
    }
    return ++this.stamp;
  }

  get currentStamp(): number {
    return this.stamp;
  }

  /** Adds `token` to the touched set with no sparse mass (its probability is then β·unigram). */
  touch(token: number): void {
    if (this.stamps[token] === this.stamp) return;
    this.stamps[token] = this.stamp;
    this.mass[token] = 0;
    this.touched[this.touchedCount++] = token;
  }
}

/** Keeps up to 32 workspaces for reuse; beyond that, workspaces are created and dropped. */
export class LocalWorkspacePool {
  private readonly idle: LocalWorkspace[] = [];

  constructor(private readonly size: number) {}

  acquire(): LocalWorkspace {
    return this.idle.pop() ?? new LocalWorkspace(this.size);
  }

  /** The caller must have reset the per-choice arrays (adjustments, adjusted, generatedCounts). */
  release(workspace: LocalWorkspace): void {
    if (this.idle.length < 32) this.idle.push(workspace);
  }
}
