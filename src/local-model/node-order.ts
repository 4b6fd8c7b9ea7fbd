/**
 * Per-context precomputation for the full sampling paths. A step's distribution is
 *
 *   P(w | h) = s(w) + β₁ · B(w),   B(w) = q₁(w | h₁) + γ₁ · unigram(w),
 *
 * s the sparse part of the contexts of length ≥ 2 and β₁ the product of their backoff weights. B
 * depends on the previous token alone, so its descending order (the node's continuations sorted by
 * B, merged with the unigram order minus them) is built once per node, on first use.
 */
import type { LocalNgramModel } from './ngram-model.js';

export class LocalNodeOrder {
  /** Per level-1 entry position (within its node's range): continuation tokens by B, highest first (ties by index). */
  readonly sortedTokens: Uint16Array;
  /** B of `sortedTokens`, same positions. */
  readonly sortedBase: Float64Array;
  /** Per level-1 entry (in token order): its position in `sortedTokens`. */
  readonly sortedPosition: Int32Array;
  /** Unigram ranks of each node's continuation tokens, ascending, same ranges. */
  readonly listRanks: Int32Array;
  /** Largest B of each node (its first token in B order). */
  readonly baseMax: Float64Array;
  /** Rank of every token in `model.unigramOrder`. */
  readonly unigramRank: Int32Array;
  private readonly ready: Uint8Array;
  private scratch: number[] = [];

  constructor(private readonly model: LocalNgramModel) {
    const level = model.levels[0];
    const entries = level.continuationOffsets[level.nodeCount];
    this.sortedTokens = new Uint16Array(entries);
    this.sortedBase = new Float64Array(entries);
    this.listRanks = new Int32Array(entries);
    this.sortedPosition = new Int32Array(entries);
    this.baseMax = new Float64Array(level.nodeCount);
    this.ready = new Uint8Array(level.nodeCount);
    this.unigramRank = new Int32Array(model.vocabularySize);
    model.unigramOrder.forEach((token, rank) => {
      this.unigramRank[token] = rank;
    });
  }

  /** Builds the order of level-1 `node` if this is its first use. */
  ensure(node: number): void {
    if (this.ready[node]) return;
    const model = this.model;
    const level = model.levels[0];
    const start = level.continuationOffsets[node];
    const end = level.continuationOffsets[node + 1];
    const gamma = model.gammas[0][node];
    const unigram = model.unigram;
    const tokens = level.continuationTokens;
    const probabilities = level.continuationProbabilities;
    const entries = this.scratch;
    entries.length = 0;
    for (let entry = start; entry < end; entry++) entries.push(entry);
    const base = (entry: number): number => probabilities[entry] + gamma * unigram[tokens[entry]];
    entries.sort((left, right) => base(right) - base(left) || tokens[left] - tokens[right]);
    for (let index = 0; index < entries.length; index++) {
      this.sortedTokens[start + index] = tokens[entries[index]];
      this.sortedBase[start + index] = base(entries[index]);
      this.listRanks[start + index] = this.unigramRank[tokens[entries[index]]];
      this.sortedPosition[entries[index]] = start + index;
    }
    this.listRanks.subarray(start, end).sort();
    // The best token outside the list is the first unigram rank the list skips.
    let rank = 0;
    for (let index = start; index < end && this.listRanks[index] === rank; index++) rank++;
    const restMax = rank < model.vocabularySize ? gamma * unigram[model.unigramOrder[rank]] : 0;
    this.baseMax[node] = Math.max(end > start ? this.sortedBase[start] : 0, restMax);
    this.ready[node] = 1;
  }
}

const orders = new WeakMap<LocalNgramModel, LocalNodeOrder>();

export function nodeOrder(model: LocalNgramModel): LocalNodeOrder {
  const order = orders.get(model) ?? new LocalNodeOrder(model);
  orders.set(model, order);
  return order;
}
