/**
 * One step's distribution for the full sampling paths, without touching the previous token's
 * (often thousands of) continuations: P(w) = s(w) + β₁·B(w) (node-order.ts). The explicit set S is
 * every token seen after the contexts of length ≥ 2 plus every token this choice adjusts; the
 * workspace holds their P (`mass`) and B (`base`). Every other token has P = β₁·B, and the stream
 * yields them in descending B order, skipping S, walked only as far as a step needs.
 */
import { nodeOrder, type LocalNodeOrder } from './node-order.js';
import { findToken, type LocalNgramModel } from './ngram-model.js';
import type { LocalWorkspace } from './workspace.js';

export class LocalStep {
  /** Whether the step holds the distribution of the current context. */
  ready = false;
  /** Level-1 node (the previous token), or −1 without context (then B is the unigram). */
  node = -1;
  /** The node's range in the level-1 arrays (empty without a node). */
  start = 0;
  end = 0;
  /** γ₁ of the node (1 without one): B = γ₁·unigram outside the node's list. */
  gamma = 1;
  betaOne = 1;
  /** Largest B over all tokens. */
  baseMax = 0;
  readonly order: LocalNodeOrder;

  /** Stream head: token (−1 when exhausted), its B, and whether it comes from the node's list (at `listPosition`). */
  headToken = -1;
  headBase = 0;
  headFromList = false;
  listPosition = 0;
  private rankPosition = 0;
  private rankPointer = 0;

  constructor(
    private readonly model: LocalNgramModel,
    private readonly workspace: LocalWorkspace,
  ) {
    this.order = nodeOrder(model);
  }

  /** Computes S, P and B on S, and β₁ for the context whose trie nodes are `nodes`; the choice adjusts `adjustedCount` tokens. */
  prepare(nodes: Int32Array, adjustedCount: number): void {
    const model = this.model;
    const workspace = this.workspace;
    const stamp = workspace.nextStamp();
    const { mass, stamps, touched, base, baseEntry, adjustedTokens } = workspace;
    const unigram = model.unigram;
    const node = nodes[0];
    this.node = node;
    const levelOne = model.levels[0];
    const oneTokens = levelOne.continuationTokens;
    const oneProbabilities = levelOne.continuationProbabilities;
    if (node >= 0) {
      this.order.ensure(node);
      this.start = levelOne.continuationOffsets[node];
      this.end = levelOne.continuationOffsets[node + 1];
      this.gamma = model.gammas[0][node];
      this.baseMax = this.order.baseMax[node];
    } else {
      this.start = this.end = 0;
      this.gamma = 1;
      this.baseMax = unigram[model.unigramOrder[0]];
    }
    const { start, end, gamma } = this;
    // β₁ is the product of the backoff weights above level 1; level L's part is weighted by those above it.
    let betaOne = 1;
    for (let length = 2; length < model.order; length++) if (nodes[length - 1] >= 0) betaOne *= model.gammas[length - 1][nodes[length - 1]];
    let touchedCount = 0;
    // Lowest level first: its continuations usually contain the higher levels' ones, and they
    // ascend like the node's level-1 list, so B is found by galloping forward through that list.
    for (let length = 2; length < model.order; length++) {
      const levelNode = nodes[length - 1];
      if (levelNode < 0) break;
      const weight = this.weightAbove(nodes, length);
      const level = model.levels[length - 1];
      const tokens = level.continuationTokens;
      const probabilities = level.continuationProbabilities;
      const last = level.continuationOffsets[levelNode + 1];
      let position = start;
      for (let entry = level.continuationOffsets[levelNode]; entry < last; entry++) {
        const token = tokens[entry];
        if (stamps[token] === stamp) {
          mass[token] += weight * probabilities[entry];
          continue;
        }
        stamps[token] = stamp;
        mass[token] = weight * probabilities[entry];
        touched[touchedCount++] = token;
        position = seek(oneTokens, position, end, token);
        const found = position < end && oneTokens[position] === token ? position : -1;
        baseEntry[token] = found;
        base[token] = (found >= 0 ? oneProbabilities[found] : 0) + gamma * unigram[token];
      }
    }
    workspace.touchedCount = touchedCount;
    const vocabularySize = model.vocabularySize;
    for (let index = 0; index < adjustedCount; index++) {
      const token = adjustedTokens[index];
      if (stamps[token] === stamp) continue;
      workspace.touch(token);
      // An id outside the vocabulary is drawn as the least likely token the model knows here (logit-bias.ts).
      const entry = node >= 0 && token < vocabularySize ? findToken(oneTokens, start, end, token) : -1;
      baseEntry[token] = entry;
      base[token] = (entry >= 0 ? oneProbabilities[entry] : 0) + gamma * (token < vocabularySize ? unigram[token] : model.smallestUnigram);
    }
    this.betaOne = betaOne;
    for (let index = 0; index < workspace.touchedCount; index++) {
      const token = touched[index];
      mass[token] += betaOne * base[token];
    }
    this.ready = true;
  }

  /** The weight of level `length`'s part: the product of the backoff weights of the longer contexts. */
  private weightAbove(nodes: Int32Array, length: number): number {
    let weight = 1;
    for (let above = length + 1; above < this.model.order; above++) if (nodes[above - 1] >= 0) weight *= this.model.gammas[above - 1][nodes[above - 1]];
    return weight;
  }

  /** P(token) in the prepared step (for tokens outside S: β₁·B). */
  probability(token: number): number {
    const workspace = this.workspace;
    if (workspace.stamps[token] === workspace.currentStamp) return workspace.mass[token];
    if (this.node < 0) return this.betaOne * this.model.unigram[token];
    const level = this.model.levels[0];
    const entry = findToken(level.continuationTokens, this.start, this.end, token);
    return this.betaOne * ((entry >= 0 ? level.continuationProbabilities[entry] : 0) + this.gamma * this.model.unigram[token]);
  }

  /** Restarts the stream at the token outside S with the largest B. */
  resetStream(): void {
    this.listPosition = this.start;
    this.rankPosition = 0;
    this.rankPointer = this.start;
    this.settle();
  }

  advance(): void {
    if (this.headFromList) this.listPosition++;
    else this.rankPosition++;
    this.settle();
  }

  private settle(): void {
    const { stamps, currentStamp } = this.workspace;
    const { sortedTokens, sortedBase, listRanks } = this.order;
    const unigramOrder = this.model.unigramOrder;
    const end = this.end;
    let list = this.listPosition;
    while (list < end && stamps[sortedTokens[list]] === currentStamp) list++;
    this.listPosition = list;
    // Unigram ranks ascend; the node's list ranks ascend too, so one pointer skips them.
    let rank = this.rankPosition;
    let pointer = this.rankPointer;
    const size = unigramOrder.length;
    while (rank < size) {
      if (pointer < end && listRanks[pointer] === rank) pointer++;
      else if (stamps[unigramOrder[rank]] !== currentStamp) break;
      rank++;
    }
    this.rankPosition = rank;
    this.rankPointer = pointer;
    const listBase = list < end ? sortedBase[list] : -1;
    const restToken = rank < size ? unigramOrder[rank] : -1;
    const restBase = restToken >= 0 ? this.gamma * this.model.unigram[restToken] : -1;
    if (listBase < 0 && restBase < 0) {
      this.headToken = -1;
      this.headBase = 0;
    } else if (listBase > restBase || (listBase === restBase && sortedTokens[list] < restToken)) {
      this.headFromList = true;
      this.headToken = sortedTokens[list];
      this.headBase = listBase;
    } else {
      this.headFromList = false;
      this.headToken = restToken;
      this.headBase = restBase;
    }
  }

  /** Writes the `count` most likely tokens, most likely first (ties by index), to `tokens` / `probabilities`; returns how many. */
  top(count: number, tokens: Int32Array, probabilities: Float64Array): number {
    let filled = 0;
    const offer = (token: number, probability: number): void => {
      if (filled === count && !better(probability, token, probabilities[count - 1], tokens[count - 1])) return;
      let slot = filled < count ? filled++ : count - 1;
      while (slot > 0 && better(probability, token, probabilities[slot - 1], tokens[slot - 1])) {
        probabilities[slot] = probabilities[slot - 1];
        tokens[slot] = tokens[slot - 1];
        slot--;
      }
      probabilities[slot] = probability;
      tokens[slot] = token;
    };
    const { touched, touchedCount, mass } = this.workspace;
    const vocabularySize = this.model.vocabularySize;
    // Ids outside the vocabulary have no model probability: they are never among the alternatives.
    for (let index = 0; index < touchedCount; index++) if (touched[index] < vocabularySize) offer(touched[index], mass[touched[index]]);
    this.resetStream();
    for (let taken = 0; taken < count && this.headToken >= 0; taken++) {
      offer(this.headToken, this.betaOne * this.headBase);
      this.advance();
    }
    return filled;
  }
}

function better(probability: number, token: number, otherProbability: number, otherToken: number): boolean {
  return probability > otherProbability || (probability === otherProbability && token < otherToken);
}

/** First position in [from, end) of the ascending `tokens` holding a value ≥ `token` (`end` if none), galloping from `from`. */
function seek(tokens: Uint16Array, from: number, end: number, token: number): number {
  if (from >= end || tokens[from] >= token) return from;
  let low = from;
  let step = 1;
  while (low + step < end && tokens[low + step] < token) {
    low += step;
    step *= 2;
  }
  let high = Math.min(low + step, end);
  low++;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (tokens[middle] < token) low = middle + 1;
    else high = middle;
  }
  return low;
}
