/**
 * Per-context precomputation for the full sampling paths. A step's distribution is
 *
 *   P(w | h) = s(w) + β₁ · B(w),   B(w) = q₁(w | h₁) + γ₁ · unigram(w),
 *
 * where s is the (small) sparse part of the contexts of length ≥ 2, β₁ the product of their
 * backoff weights, and B the interpolated bigram distribution of the previous token h₁ alone: it
 * depends on one level-1 node, so it can be ordered once and reused every time that token comes
 * back. Its descending order is the node's continuations sorted by B (built here on first use),
 * merged with the unigram order minus those continuations (their unigram ranks, sorted here too).
 *
 * For a temperature, `LocalTemperedNodes` keeps per node the running sums of (B / B_max)^(1/T)
 * over that sorted list, so normalisers and tail draws need no power per continuation per step.
 */
import type { LocalNgramModel } from './ngram-model.js';
import type { LocalTemperatureTable } from './temperature-table.js';

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

/** Tempered sums of one temperature, per level-1 node (built on first use; the node's order must be ready). */
export class LocalTemperedNodes {
  /** Running sums of (B / B_max)^(1/T) over each node's sorted list. */
  readonly cumulative: Float64Array;
  /** Sum of the table weights of the tokens outside each node's list: Σ (unigram / unigramMax)^(1/T). */
  readonly restWeight: Float64Array;
  /** (γ₁ · unigramMax / B_max)^(1/T): turns a table weight into (B / B_max)^(1/T) outside the list. */
  readonly restScale: Float64Array;
  private readonly ready: Uint8Array;

  constructor(
    private readonly model: LocalNgramModel,
    private readonly order: LocalNodeOrder,
    private readonly table: LocalTemperatureTable,
  ) {
    const level = model.levels[0];
    this.cumulative = new Float64Array(level.continuationOffsets[level.nodeCount]);
    this.restWeight = new Float64Array(level.nodeCount);
    this.restScale = new Float64Array(level.nodeCount);
    this.ready = new Uint8Array(level.nodeCount);
  }

  ensure(node: number): void {
    if (this.ready[node]) return;
    const level = this.model.levels[0];
    const start = level.continuationOffsets[node];
    const end = level.continuationOffsets[node + 1];
    const inverse = this.table.inverseTemperature;
    const max = this.order.baseMax[node];
    const { sortedBase, sortedTokens } = this.order;
    const weights = this.table.weights;
    let sum = 0;
    let listWeight = 0;
    for (let index = start; index < end; index++) {
      const ratio = max > 0 ? sortedBase[index] / max : 0;
      sum += inverse === 1 ? ratio : ratio ** inverse;
      this.cumulative[index] = sum;
      listWeight += weights[sortedTokens[index]];
    }
    this.restWeight[node] = Math.max(this.table.total - listWeight, 0);
    const restRatio = max > 0 ? (this.model.gammas[0][node] * this.table.unigramMax) / max : 0;
    this.restScale[node] = inverse === 1 ? restRatio : restRatio ** inverse;
    this.ready[node] = 1;
  }
}

const orders = new WeakMap<LocalNgramModel, LocalNodeOrder>();
const tempered = new WeakMap<LocalTemperatureTable, LocalTemperedNodes>();

export function nodeOrder(model: LocalNgramModel): LocalNodeOrder {
  let order = orders.get(model);
  if (!order) {
    order = new LocalNodeOrder(model);
    orders.set(model, order);
  }
  return order;
}

export function temperedNodes(model: LocalNgramModel, table: LocalTemperatureTable): LocalTemperedNodes {
  let nodes = tempered.get(table);
  if (!nodes) {
    nodes = new LocalTemperedNodes(model, nodeOrder(model), table);
    tempered.set(table, nodes);
  }
  return nodes;
}
