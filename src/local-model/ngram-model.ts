/**
 * The runtime n-gram model: the trie nodes of a context, and the interpolated Kneser-Ney
 *
 *   P(w | h) = Σ_levels β_L · q_L(w | h_L) + β · unigram(w),
 *
 * q_L the discounted level probabilities, β_L the product of the backoff weights γ of the longer
 * contexts, β the product of all of them. A step touches only the sparse part (the continuations
 * seen after the context); the dense unigram part is precomputed once.
 */
import type { LocalModelData, LocalModelLevel } from './model-data.js';
import type { RandomSource } from './random.js';
import type { LocalWorkspace } from './workspace.js';

/** Marks "no token here" in a context history (before the start, or a token the model never saw). */
export const NO_TOKEN = -1;

export class LocalNgramModel {
  readonly order: number;
  readonly vocabularySize: number;
  /** Vocabulary index → cl100k id. */
  readonly vocabulary: Int32Array;
  /** Vocabulary index of end-of-text (the last one). */
  readonly endOfText: number;
  readonly unigram: Float64Array;
  /** Vocabulary indexes by unigram probability, highest first (ties by index). */
  readonly unigramOrder: Int32Array;
  readonly smallestUnigram: number;
  /** Running sums of `unigram`, for sampling it by binary search. */
  private readonly unigramCumulative: Float64Array;
  readonly levels: LocalModelLevel[];
  /** Backoff weight γ of every node, per level: 1 − Σ of its discounted probabilities (so every step sums to 1 exactly). */
  readonly gammas: Float64Array[];
  /** Largest discounted probability of every node, per level (for the rejection sampler's bound). */
  private readonly largest: Float32Array[];
  private readonly indexByToken: Int32Array;

  constructor(data: LocalModelData) {
    this.order = data.order;
    this.vocabulary = data.vocabulary;
    this.vocabularySize = data.vocabulary.length;
    this.endOfText = this.vocabularySize - 1;
    this.unigram = data.unigram;
    this.levels = data.levels;
    this.indexByToken = new Int32Array(data.vocabulary[this.vocabularySize - 1] + 1).fill(NO_TOKEN);
    data.vocabulary.forEach((id, index) => {
      this.indexByToken[id] = index;
    });
    this.gammas = [];
    this.largest = [];
    for (const level of data.levels) {
      const gammas = new Float64Array(level.nodeCount);
      const largest = new Float32Array(level.nodeCount);
      const offsets = level.continuationOffsets;
      const probabilities = level.continuationProbabilities;
      for (let node = 0; node < level.nodeCount; node++) {
        let kept = 0;
        let max = 0;
        for (let entry = offsets[node]; entry < offsets[node + 1]; entry++) {
          kept += probabilities[entry];
          if (probabilities[entry] > max) max = probabilities[entry];
        }
        gammas[node] = Math.max(1 - kept, 0);
        largest[node] = max;
      }
      this.gammas.push(gammas);
      this.largest.push(largest);
    }
    const order = Array.from({ length: this.vocabularySize }, (_, index) => index);
    order.sort((left, right) => this.unigram[right] - this.unigram[left] || left - right);
    this.unigramOrder = Int32Array.from(order);
    this.smallestUnigram = this.unigram[this.unigramOrder[this.vocabularySize - 1]];
    this.unigramCumulative = new Float64Array(this.vocabularySize);
    let sum = 0;
    for (let index = 0; index < this.vocabularySize; index++) this.unigramCumulative[index] = sum += this.unigram[index];
  }

  /** Vocabulary index of a cl100k id, or NO_TOKEN when the model cannot emit it. */
  indexOf(tokenId: number): number {
    return tokenId >= 0 && tokenId < this.indexByToken.length ? this.indexByToken[tokenId] : NO_TOKEN;
  }

  /** `nodes[L - 1]` receives the trie node of the last L tokens of `history` (latest first), or −1: NO_TOKEN ends the context. */
  findNodes(history: Int32Array, nodes: Int32Array): void {
    nodes.fill(-1);
    let node = history[0];
    if (node < 0) return;
    nodes[0] = node;
    for (let length = 2; length < this.order; length++) {
      const token = history[length - 1];
      if (token < 0) return;
      const parent = this.levels[length - 2];
      node = findToken(this.levels[length - 1].nodeTokens, parent.childOffsets[node], parent.childOffsets[node + 1], token);
      if (node < 0) return;
      nodes[length - 1] = node;
    }
  }

  /** Writes the sparse part of P(· | nodes) into the workspace's `mass` and returns β: P(w) = mass[w] + β·unigram[w]. */
  accumulate(nodes: Int32Array, workspace: LocalWorkspace): number {
    const stamp = workspace.nextStamp();
    const { mass, stamps, touched } = workspace;
    let touchedCount = 0;
    let weight = 1;
    for (let length = this.order - 1; length >= 1; length--) {
      const node = nodes[length - 1];
      if (node < 0) continue;
      const level = this.levels[length - 1];
      const tokens = level.continuationTokens;
      const probabilities = level.continuationProbabilities;
      const end = level.continuationOffsets[node + 1];
      for (let entry = level.continuationOffsets[node]; entry < end; entry++) {
        const token = tokens[entry];
        if (stamps[token] !== stamp) {
          stamps[token] = stamp;
          mass[token] = weight * probabilities[entry];
          touched[touchedCount++] = token;
        } else {
          mass[token] += weight * probabilities[entry];
        }
      }
      weight *= this.gammas[length - 1][node];
    }
    workspace.touchedCount = touchedCount;
    return weight;
  }

  /** P(token | nodes) without touching a workspace: one binary search per level. */
  probability(nodes: Int32Array, token: number): number {
    let probability = 0;
    let weight = 1;
    for (let length = this.order - 1; length >= 1; length--) {
      const node = nodes[length - 1];
      if (node < 0) continue;
      const level = this.levels[length - 1];
      const entry = findToken(level.continuationTokens, level.continuationOffsets[node], level.continuationOffsets[node + 1], token);
      if (entry >= 0) probability += weight * level.continuationProbabilities[entry];
      weight *= this.gammas[length - 1][node];
    }
    return probability + weight * this.unigram[token];
  }

  /** An upper bound on max_w P(w | nodes): the sum of every part's largest value. */
  probabilityBound(nodes: Int32Array): number {
    let bound = 0;
    let weight = 1;
    for (let length = this.order - 1; length >= 1; length--) {
      const node = nodes[length - 1];
      if (node < 0) continue;
      bound += weight * this.largest[length - 1][node];
      weight *= this.gammas[length - 1][node];
    }
    return Math.min(bound + weight * this.unigram[this.unigramOrder[0]], 1);
  }

  /** Samples P(· | nodes) as the mixture it is: a level by its weight, then a continuation inside it. */
  sample(nodes: Int32Array, random: RandomSource): number {
    let target = random.next();
    let weight = 1;
    for (let length = this.order - 1; length >= 1; length--) {
      const node = nodes[length - 1];
      if (node < 0) continue;
      const gamma = this.gammas[length - 1][node];
      const levelMass = weight * (1 - gamma);
      if (target < levelMass) {
        const level = this.levels[length - 1];
        const tokens = level.continuationTokens;
        const probabilities = level.continuationProbabilities;
        const start = level.continuationOffsets[node];
        const end = level.continuationOffsets[node + 1];
        let cumulative = 0;
        for (let entry = start; entry < end; entry++) {
          cumulative += weight * probabilities[entry];
          if (target < cumulative) return tokens[entry];
        }
        return lastPositive(tokens, probabilities, start, end);
      }
      target -= levelMass;
      weight *= gamma;
    }
    return findCumulative(this.unigramCumulative, 0, this.vocabularySize, Math.min(target / weight, 1));
  }

  /** The full distribution after a context of cl100k ids (for tests and inspection), indexed by vocabulary index. */
  distribution(context: readonly number[], workspace: LocalWorkspace): Float64Array {
    const history = new Int32Array(this.order - 1).fill(NO_TOKEN);
    for (let back = 0; back < history.length && back < context.length; back++) history[back] = this.indexOf(context[context.length - 1 - back]);
    const nodes = new Int32Array(this.order - 1);
    this.findNodes(history, nodes);
    const beta = this.accumulate(nodes, workspace);
    const result = new Float64Array(this.vocabularySize);
    for (let token = 0; token < this.vocabularySize; token++) result[token] = beta * this.unigram[token];
    for (let index = 0; index < workspace.touchedCount; index++) {
      const token = workspace.touched[index];
      result[token] += workspace.mass[token];
    }
    return result;
  }
}

/** Index of `token` in the ascending `tokens[start … end)`, or −1. */
export function findToken(tokens: Uint16Array, start: number, end: number, token: number): number {
  let low = start;
  let high = end - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const value = tokens[middle];
    if (value === token) return middle;
    if (value < token) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}

/** First index in [start, end) whose running sum exceeds `target` (the last one when none does). */
export function findCumulative(cumulative: Float64Array, start: number, end: number, target: number): number {
  let low = start;
  let high = end - 1;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (cumulative[middle] > target) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** Rounding can leave the target a hair above the list's sum; the last token with mass absorbs it. */
function lastPositive(tokens: Uint16Array, probabilities: Float32Array, start: number, end: number): number {
  for (let entry = end - 1; entry >= start; entry--) if (probabilities[entry] > 0) return tokens[entry];
  return tokens[start];
}
