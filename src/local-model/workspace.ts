/**
 * Scratch memory for generating one choice: dense arrays over the sampler's indexes (the model's
 * vocabulary, then room for the ids outside it that logit_bias lifts; see logit-bias.ts), reused
 * step after step so a token costs no allocation. Concurrent requests each borrow their own
 * workspace from a small pool.
 */
export class LocalWorkspace {
  /** Sparse probability mass of the touched tokens (valid where `stamps[token]` is the current stamp). */
  readonly mass: Float64Array;
  /** Per token, the step that last touched it; comparing stamps avoids clearing `mass` each step. */
  readonly stamps: Int32Array;
  /** The tokens touched in the current step, `touchedCount` of them. */
  readonly touched: Int32Array;
  touchedCount = 0;
  /** Per-token sampling weight of the current step (valid for touched tokens). */
  readonly weights: Float64Array;
  /** Logit adjustment per token: logit bias minus the presence/frequency penalties. */
  readonly adjustments: Float64Array;
  /** 1 where `adjustments` is in use for this choice. */
  readonly adjusted: Uint8Array;
  /** The tokens marked in `adjusted`, in marking order (the sampler keeps their count). */
  readonly adjustedTokens: Int32Array;
  /** Times each token was generated in this choice (for the penalties). */
  readonly generatedCounts: Int32Array;
  /** B of the touched tokens in a prepared step (see step.ts). */
  readonly base: Float64Array;
  /** Level-1 entry of the touched tokens in a prepared step, −1 when the previous token's list lacks them. */
  readonly baseEntry: Int32Array;
  /** Max-heap of token ids for top_p, and the nucleus being built, sized to the vocabulary. */
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

/** Keeps a few workspaces for reuse; beyond that, workspaces are created and dropped. */
export class LocalWorkspacePool {
  private readonly idle: LocalWorkspace[] = [];

  constructor(
    private readonly size: number,
    private readonly keep = 32,
  ) {}

  acquire(): LocalWorkspace {
    return this.idle.pop() ?? new LocalWorkspace(this.size);
  }

  /** The caller must have reset the per-choice arrays (adjustments, adjusted, generatedCounts). */
  release(workspace: LocalWorkspace): void {
    if (this.idle.length < this.keep) this.idle.push(workspace);
  }
}
