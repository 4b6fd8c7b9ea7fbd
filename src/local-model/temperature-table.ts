/**
 * What sampling at one temperature precomputes (the 16 most recent temperatures of a model are
 * kept). A token the context never saw weighs (β·unigramMax)^(1/T) · (unigram[w]/unigramMax)^(1/T):
 * the second factor is `weights`, the first one number per step. Per level-1 node, running sums of
 * (B / B_max)^(1/T) over its list sorted by B (node-order.ts) spare a power per continuation per
 * step. Relative to a maximum, small temperatures underflow only where the weight is negligible.
 */
import type { LocalNgramModel } from './ngram-model.js';
import { type LocalNodeOrder, nodeOrder } from './node-order.js';

export class LocalTemperatureTable {
  /** The model's largest unigram probability (the scale `weights` are relative to). */
  readonly unigramMax: number;
  /** (unigram[w] / unigramMax)^(1/T), by vocabulary index. */
  readonly weights: Float64Array;
  /** Running sums of `weights`, for sampling by binary search. */
  readonly cumulative: Float64Array;
  readonly total: number;
  /** Running sums of (B / B_max)^(1/T) over each node's sorted list (level-1 entry positions). */
  readonly listCumulative: Float64Array;
  /** Per node: the sum of `weights` over the tokens outside its list. */
  readonly restWeight: Float64Array;
  /** Per node: (γ₁ · unigramMax / B_max)^(1/T), which turns `weights` into (B / B_max)^(1/T) outside the list. */
  readonly restScale: Float64Array;
  private readonly order: LocalNodeOrder;
  private readonly ready: Uint8Array;

  constructor(
    private readonly model: LocalNgramModel,
    readonly inverseTemperature: number,
  ) {
    const unigram = model.unigram;
    this.unigramMax = unigram[model.unigramOrder[0]];
    this.weights = new Float64Array(unigram.length);
    this.cumulative = new Float64Array(unigram.length);
    let total = 0;
    for (let token = 0; token < unigram.length; token++) {
      const ratio = unigram[token] / this.unigramMax;
      this.weights[token] = inverseTemperature === 1 ? ratio : ratio ** inverseTemperature;
      this.cumulative[token] = total += this.weights[token];
    }
    this.total = total;
    const level = model.levels[0];
    this.order = nodeOrder(model);
    this.listCumulative = new Float64Array(level.continuationOffsets[level.nodeCount]);
    this.restWeight = new Float64Array(level.nodeCount);
    this.restScale = new Float64Array(level.nodeCount);
    this.ready = new Uint8Array(level.nodeCount);
  }

  /** Builds the sums of level-1 `node` if this is its first use (the node's order must be ready). */
  ensure(node: number): void {
    if (this.ready[node]) return;
    const level = this.model.levels[0];
    const start = level.continuationOffsets[node];
    const end = level.continuationOffsets[node + 1];
    const inverse = this.inverseTemperature;
    const max = this.order.baseMax[node];
    const { sortedBase, sortedTokens } = this.order;
    let sum = 0;
    let listWeight = 0;
    for (let index = start; index < end; index++) {
      const ratio = max > 0 ? sortedBase[index] / max : 0;
      sum += inverse === 1 ? ratio : ratio ** inverse;
      this.listCumulative[index] = sum;
      listWeight += this.weights[sortedTokens[index]];
    }
    this.restWeight[node] = Math.max(this.total - listWeight, 0);
    const restRatio = max > 0 ? (this.model.gammas[0][node] * this.unigramMax) / max : 0;
    this.restScale[node] = inverse === 1 ? restRatio : restRatio ** inverse;
    this.ready[node] = 1;
  }
}

const KEEP = 16;
const tablesByModel = new WeakMap<LocalNgramModel, Map<number, LocalTemperatureTable>>();

export function temperatureTable(model: LocalNgramModel, inverseTemperature: number): LocalTemperatureTable {
  const tables = tablesByModel.get(model) ?? new Map<number, LocalTemperatureTable>();
  tablesByModel.set(model, tables);
  let table = tables.get(inverseTemperature);
  // Map order is insertion order: re-inserting makes this the most recently used.
  if (table) tables.delete(inverseTemperature);
  else table = new LocalTemperatureTable(model, inverseTemperature);
  tables.set(inverseTemperature, table);
  if (tables.size > KEEP) tables.delete(tables.keys().next().value as number);
  return table;
}
