/**
 * Sampling from softmax((log P + adjustment) / T) of a prepared step, optionally within the top_p
 * nucleus, without evaluating every token. Weights are relative to the largest one, so nothing
 * overflows and only negligible weights underflow.
 *
 * - S tokens (step.ts) get their weight computed. Every other token weighs scale · (B / B_max)^(1/T),
 *   one scale per step, and the table's per-node sums give their total without visiting them:
 *   Σ_{w∉S} = scale · (Σ_all (B/B_max)^(1/T) − Σ_{w∈S} (B/B_max)^(1/T)).
 * - top_p: the nucleus (the fewest highest-weight tokens whose mass reaches top_p of the total) is
 *   built by merging S, from a max-heap, with the stream of the other tokens, already descending.
 * - Without top_p, a draw outside S samples the rest by exact rejection from the node's tempered
 *   list plus the tempered unigram, with an exact walk if that keeps failing.
 */
import { findCumulative, findToken, type LocalNgramModel } from './ngram-model.js';
import type { RandomSource } from './random.js';
import type { LocalStep } from './step.js';
import type { LocalTemperatureTable } from './temperature-table.js';
import type { LocalWorkspace } from './workspace.js';

const REJECTION_ATTEMPTS = 256;

export class LocalTemperedDraw {
  /** A stream token weighs scale · (B / B_max)^(1/T): scale · restScale · table weight outside the node's list. */
  private scale = 0;
  private restScale = 1;
  /** Σ (B / B_max)^(1/T) over the node's list, and over the rest of the vocabulary in table weights. */
  private listTotal = 0;
  private restWeight = 0;

  constructor(
    private readonly model: LocalNgramModel,
    private readonly workspace: LocalWorkspace,
    private readonly step: LocalStep,
    private readonly table: LocalTemperatureTable,
  ) {}

  /** A token from the tempered, adjusted distribution of the prepared step, within the top_p nucleus when topP < 1. */
  sample(random: RandomSource, topP: number): number {
    const step = this.step;
    const { touched, touchedCount, mass, baseEntry, adjusted, adjustments, weights } = this.workspace;
    const inverse = this.table.inverseTemperature;
    const node = step.node;
    if (node >= 0) {
      this.table.ensure(node);
      this.listTotal = step.end > step.start ? this.table.listCumulative[step.end - 1] : 0;
      this.restWeight = this.table.restWeight[node];
      this.restScale = this.table.restScale[node];
    } else {
      this.listTotal = 0;
      this.restWeight = this.table.total;
      this.restScale = 1;
    }
    step.resetStream();

    // The largest tempered logit: among unadjusted tokens it belongs to the most likely one.
    let maxPlain = step.headToken >= 0 ? step.betaOne * step.headBase : 0;
    for (let index = 0; index < touchedCount; index++) {
      const token = touched[index];
      if (!adjusted[token] && mass[token] > maxPlain) maxPlain = mass[token];
    }
    let maxLogit = maxPlain > 0 ? inverse * Math.log(maxPlain) : -Infinity;
    for (let index = 0; index < touchedCount; index++) {
      const token = touched[index];
      if (!adjusted[token]) continue;
      const logit = inverse * (Math.log(mass[token]) + adjustments[token]);
      weights[token] = logit;
      if (logit > maxLogit) maxLogit = logit;
    }
    if (maxLogit === -Infinity) return touchedCount > 0 ? touched[0] : step.headToken;

    // Weights relative to exp(maxLogit); `reference` is the probability whose tempered logit that is.
    const inverseReference = Math.exp(-maxLogit / inverse);
    const baseMax = step.baseMax;
    const sortedPosition = step.order.sortedPosition;
    const cumulative = this.table.listCumulative;
    const tableWeights = this.table.weights;
    const start = step.start;
    const vocabularySize = this.model.vocabularySize;
    let total = 0;
    let baseSum = 0;
    for (let index = 0; index < touchedCount; index++) {
      const token = touched[index];
      let weight: number;
      if (adjusted[token]) weight = Math.exp(weights[token] - maxLogit);
      else {
        const relative = mass[token] * inverseReference;
        weight = inverse === 1 ? relative : Math.exp(inverse * Math.log(relative));
      }
      weights[token] = weight;
      total += weight;
      // (B / B_max)^(1/T) of this token, read from the same sums the stream total comes from
      // (an id outside the vocabulary is in no such sum).
      if (token >= vocabularySize) continue;
      const entry = baseEntry[token];
      if (entry < 0) baseSum += this.restScale * tableWeights[token];
      else {
        const position = sortedPosition[entry];
        baseSum += cumulative[position] - (position > start ? cumulative[position - 1] : 0);
      }
    }
    const scaleBase = step.betaOne * baseMax * inverseReference;
    this.scale = inverse === 1 ? scaleBase : scaleBase ** inverse;
    const streamMass = this.scale * Math.max(this.listTotal + this.restScale * this.restWeight - baseSum, 0);

    if (topP < 1) return this.sampleNucleus(random, topP * (total + streamMass));
    let target = random.next() * (total + streamMass);
    for (let index = 0; index < touchedCount; index++) {
      target -= weights[touched[index]];
      if (target < 0) return touched[index];
    }
    if (streamMass > 0) return this.sampleStream(random);
    for (let index = touchedCount - 1; index >= 0; index--) if (weights[touched[index]] > 0) return touched[index];
    return touchedCount > 0 ? touched[0] : step.headToken;
  }

  private headWeight(): number {
    const step = this.step;
    if (!step.headFromList) return this.scale * this.restScale * this.table.weights[step.headToken];
    const { listPosition: position, start } = step;
    const cumulative = this.table.listCumulative;
    return this.scale * (cumulative[position] - (position > start ? cumulative[position - 1] : 0));
  }

  /** The nucleus merge, one tight loop over the S heap, the node's sorted list and the unigram order minus that list. */
  private sampleNucleus(random: RandomSource, target: number): number {
    const step = this.step;
    const { touched, touchedCount, weights, heap, nucleusTokens, nucleusWeights, stamps, currentStamp } = this.workspace;
    const { sortedTokens, listRanks } = step.order;
    const cumulative = this.table.listCumulative;
    const tableWeights = this.table.weights;
    const unigramOrder = this.model.unigramOrder;
    const size = unigramOrder.length;
    const scale = this.scale;
    const restScale = scale * this.restScale;
    const { start, end } = step;
    for (let index = 0; index < touchedCount; index++) heap[index] = touched[index];
    let heapSize = touchedCount;
    for (let index = (heapSize >>> 1) - 1; index >= 0; index--) siftDown(heap, heapSize, index, weights);

    let list = start;
    while (list < end && stamps[sortedTokens[list]] === currentStamp) list++;
    let listToken = list < end ? sortedTokens[list] : -1;
    let listWeight = list < end ? scale * (cumulative[list] - (list > start ? cumulative[list - 1] : 0)) : -1;
    let rank = 0;
    let pointer = start;
    for (; rank < size; rank++) {
      if (pointer < end && listRanks[pointer] === rank) pointer++;
      else if (stamps[unigramOrder[rank]] !== currentStamp) break;
    }
    let restToken = rank < size ? unigramOrder[rank] : -1;
    let restWeight = rank < size ? restScale * tableWeights[restToken] : -1;

    let count = 0;
    let mass = 0;
    for (;;) {
      const heapToken = heapSize > 0 ? heap[0] : -1;
      const heapWeight = heapSize > 0 ? weights[heapToken] : -1;
      let token: number;
      let weight: number;
      if (listWeight > restWeight || (listWeight === restWeight && listToken >= 0 && listToken < restToken)) {
        if (heapWeight > listWeight || (heapWeight === listWeight && heapToken < listToken)) {
          token = heapToken;
          weight = heapWeight;
          heap[0] = heap[--heapSize];
          siftDown(heap, heapSize, 0, weights);
        } else {
          token = listToken;
          weight = listWeight;
          list++;
          while (list < end && stamps[sortedTokens[list]] === currentStamp) list++;
          listToken = list < end ? sortedTokens[list] : -1;
          listWeight = list < end ? scale * (cumulative[list] - cumulative[list - 1]) : -1;
        }
      } else if (restToken >= 0 && (restWeight > heapWeight || (restWeight === heapWeight && restToken < heapToken))) {
        token = restToken;
        weight = restWeight;
        for (rank++; rank < size; rank++) {
          if (pointer < end && listRanks[pointer] === rank) pointer++;
          else if (stamps[unigramOrder[rank]] !== currentStamp) break;
        }
        restToken = rank < size ? unigramOrder[rank] : -1;
        restWeight = rank < size ? restScale * tableWeights[restToken] : -1;
      } else if (heapToken >= 0) {
        token = heapToken;
        weight = heapWeight;
        heap[0] = heap[--heapSize];
        siftDown(heap, heapSize, 0, weights);
      } else break; // every source is exhausted
      if (count > 0 && weight <= 0) break; // nothing left adds mass
      nucleusTokens[count] = token;
      nucleusWeights[count++] = weight;
      mass += weight;
      if (mass >= target) break;
    }
    let draw = random.next() * mass;
    for (let index = 0; index < count; index++) {
      draw -= nucleusWeights[index];
      if (draw < 0) return nucleusTokens[index];
    }
    for (let index = count - 1; index >= 0; index--) if (nucleusWeights[index] > 0) return nucleusTokens[index];
    return nucleusTokens[0];
  }

  /** A token outside S with probability ∝ its weight. */
  private sampleStream(random: RandomSource): number {
    const step = this.step;
    const { stamps, currentStamp } = this.workspace;
    const table = this.table;
    const restAll = this.restScale * table.total;
    const sortedTokens = step.order.sortedTokens;
    const level = this.model.levels[0];
    for (let attempt = 0; attempt < REJECTION_ATTEMPTS; attempt++) {
      const draw = random.next() * (this.listTotal + restAll);
      let token: number;
      if (draw < this.listTotal) token = sortedTokens[findCumulative(this.table.listCumulative, step.start, step.end, draw)];
      else {
        token = findCumulative(table.cumulative, 0, table.cumulative.length, random.next() * table.total);
        if (step.node >= 0 && findToken(level.continuationTokens, step.start, step.end, token) >= 0) continue;
      }
      if (stamps[token] !== currentStamp) return token;
    }
    // Exact walk over the stream (rare: S holds nearly all of the rest's weight).
    let remaining = 0;
    let last = -1;
    for (step.resetStream(); step.headToken >= 0; step.advance()) remaining += this.headWeight();
    let target = random.next() * remaining;
    for (step.resetStream(); step.headToken >= 0; step.advance()) {
      const weight = this.headWeight();
      if (weight > 0) last = step.headToken;
      target -= weight;
      if (target < 0) return step.headToken;
    }
    return last >= 0 ? last : this.workspace.touched[0];
  }
}

/** Max-heap by weight (ties: lower token first) of `heap[0 … size)`. */
function siftDown(heap: Int32Array, size: number, index: number, weights: Float64Array): void {
  const token = heap[index];
  const weight = weights[token];
  for (;;) {
    let child = 2 * index + 1;
    if (child >= size) break;
    if (child + 1 < size && before(heap[child + 1], heap[child], weights)) child++;
    const childWeight = weights[heap[child]];
    if (!(childWeight > weight || (childWeight === weight && heap[child] < token))) break;
    heap[index] = heap[child];
    index = child;
  }
  heap[index] = token;
}

function before(left: number, right: number, weights: Float64Array): boolean {
  return weights[left] > weights[right] || (weights[left] === weights[right] && left < right);
}
