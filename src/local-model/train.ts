/**
 * Trains the interpolated modified Kneser-Ney n-gram model (Chen & Goodman 1998) from a token
 * stream. Counting is one radix sort of all positions by their reversed context, followed by a
 * single scan: in that order every context's continuations are contiguous and sorted, and the
 * Kneser-Ney continuation counts of each lower order fall out of closing the higher-order nodes.
 */
import { END_OF_TEXT_TOKEN } from '../tokenizer/tokenizer.js';
import type { LocalModelData, LocalModelLevel } from './model-data.js';

/** Growable typed-array buffer, so counting never builds JS arrays of millions of numbers. */
class GrowableUint32 {
  values: Uint32Array;
  length = 0;
  constructor(capacity: number) {
    this.values = new Uint32Array(Math.max(16, capacity));
  }
  push(value: number): void {
    if (this.length === this.values.length) {
      const bigger = new Uint32Array(this.values.length * 2);
      bigger.set(this.values);
      this.values = bigger;
    }
    this.values[this.length++] = value;
  }
  toArray(): Uint32Array {
    return this.values.slice(0, this.length);
  }
}

type LevelCounts = Record<'nodeTokens' | 'continuationOffsets' | 'continuationTokens' | 'continuationCounts' | 'childOffsets', GrowableUint32>;

/** Modified Kneser-Ney discounts for counts 1, 2 and 3+ (index 0 unused), from the count-of-counts. */
function modifiedKneserNeyDiscounts(counts: Uint32Array): Float64Array {
  const countOfCounts = [0, 0, 0, 0, 0];
  for (const count of counts) if (count <= 4) countOfCounts[count]++;
  const [, n1, n2, n3, n4] = countOfCounts;
  const discounts = new Float64Array(4);
  if (n1 === 0 || n2 === 0 || n3 === 0 || n4 === 0) {
    // Too little data for the estimate: fall back to the classic single discount of 0.75.
    discounts.fill(0.75);
    discounts[0] = 0;
    return discounts;
  }
  const y = n1 / (n1 + 2 * n2);
  discounts[1] = clampDiscount(1 - 2 * y * (n2 / n1), 1);
  discounts[2] = clampDiscount(2 - 3 * y * (n3 / n2), 2);
  discounts[3] = clampDiscount(3 - 4 * y * (n4 / n3), 3);
  return discounts;
}

function clampDiscount(value: number, count: number): number {
  return Math.min(Math.max(value, 0.05), count - 0.05);
}

/** Sorts `positions` by the digits digit(k) for k = first … last, most significant first (LSD radix sort). */
function radixSortPositions(tokens: Uint16Array, positions: Uint32Array, order: number, vocabularySize: number): Uint32Array {
  let source: Uint32Array = positions;
  let target: Uint32Array = new Uint32Array(positions.length);
  const buckets = new Uint32Array(vocabularySize + 1);
  // Least significant digit first: the continuation, then the context from farthest to nearest.
  const shifts = [0];
  for (let back = order - 1; back >= 1; back--) shifts.push(-back);
  for (const shift of shifts) {
    buckets.fill(0);
    for (let index = 0; index < source.length; index++) buckets[tokens[source[index] + shift] + 1]++;
    for (let bucket = 1; bucket <= vocabularySize; bucket++) buckets[bucket] += buckets[bucket - 1];
    for (let index = 0; index < source.length; index++) {
      const position = source[index];
      target[buckets[tokens[position + shift]]++] = position;
    }
    [source, target] = [target, source];
  }
  return source;
}

/** The model of `order` over `stream`: cl100k ids that start with order − 1 end-of-text tokens of padding. */
export function trainLocalModel(stream: Int32Array, order: number): LocalModelData {
  const vocabulary = Int32Array.from(new Set(stream)).sort();
  if (vocabulary[vocabulary.length - 1] !== END_OF_TEXT_TOKEN) throw new Error('The corpus stream must contain end-of-text tokens.');
  if (vocabulary.length > 65535) throw new Error('The local model stores tokens as 16-bit vocabulary indexes.');
  const vocabularySize = vocabulary.length;
  const indexOf = new Int32Array(END_OF_TEXT_TOKEN + 1).fill(-1);
  vocabulary.forEach((id, index) => {
    indexOf[id] = index;
  });
  const tokens = new Uint16Array(stream.length);
  for (let index = 0; index < stream.length; index++) tokens[index] = indexOf[stream[index]];

  const contextLength = order - 1;
  const positions = new Uint32Array(stream.length - contextLength);
  for (let index = 0; index < positions.length; index++) positions[index] = index + contextLength;
  const sorted = radixSortPositions(tokens, positions, order, vocabularySize);

  const levels: LevelCounts[] = [];
  for (let length = 1; length <= contextLength; length++) {
    const estimate = Math.min(sorted.length, vocabularySize * 8 * length);
    levels.push({
      nodeTokens: new GrowableUint32(estimate),
      continuationOffsets: new GrowableUint32(estimate),
      continuationTokens: new GrowableUint32(estimate * 2),
      continuationCounts: new GrowableUint32(estimate * 2),
      childOffsets: new GrowableUint32(estimate),
    });
  }
  // Kneser-Ney continuation counts of the node being built at each level (index 0: the unigram level).
  const scratchCounts = Array.from({ length: contextLength }, () => new Uint32Array(vocabularySize));
  const scratchTouched = Array.from({ length: contextLength }, () => new Uint32Array(vocabularySize));
  const scratchTouchedCount = new Uint32Array(contextLength);
  const unigramCounts = scratchCounts[0];

  /** The token `back` positions before `position` (0: the continuation itself). */
  const digit = (position: number, back: number): number => tokens[position - back];
  /** Counts `token` once more at the node being built for context length `level` (0: the unigram). */
  const countContinuation = (level: number, token: number): void => {
    const counts = scratchCounts[level];
    if (counts[token]++ === 0) scratchTouched[level][scratchTouchedCount[level]++] = token;
  };
  /** Starts a node of `length` whose continuations and children begin at the lists' current ends. */
  const pushNode = (length: number): void => {
    const level = levels[length - 1];
    level.continuationOffsets.push(level.continuationTokens.length);
    if (length < contextLength) level.childOffsets.push(levels[length].continuationOffsets.length);
  };
  const openNode = (length: number, token: number): void => {
    // Level 1 is dense: every skipped vocabulary index gets an empty node.
    if (length === 1) while (levels[0].continuationOffsets.length < token) pushNode(1);
    else levels[length - 1].nodeTokens.push(token);
    pushNode(length);
  };
  const closeNode = (length: number): void => {
    if (length === contextLength) return; // top-level entries are written run by run
    const level = levels[length - 1];
    const counts = scratchCounts[length];
    const touched = scratchTouched[length].subarray(0, scratchTouchedCount[length]).sort();
    for (const token of touched) {
      level.continuationTokens.push(token);
      level.continuationCounts.push(counts[token]);
      counts[token] = 0;
      countContinuation(length - 1, token);
    }
    scratchTouchedCount[length] = 0;
  };

  let runLength = 0;
  /** Writes the run of positions that ends at `position` (same context, same continuation) as a top-level entry. */
  const writeRun = (position: number): void => {
    const top = levels[contextLength - 1];
    top.continuationTokens.push(tokens[position]);
    top.continuationCounts.push(runLength);
    countContinuation(contextLength - 1, tokens[position]);
    runLength = 0;
  };
  for (let index = 0; index < sorted.length; index++) {
    const position = sorted[index];
    let differs = 1; // first differing digit: 1 … contextLength for context, order for the continuation, order + 1 for none
    if (index > 0) {
      const previous = sorted[index - 1];
      while (differs <= contextLength && digit(previous, differs) === digit(position, differs)) differs++;
      if (differs > contextLength && tokens[previous] === tokens[position]) differs = order + 1;
      if (differs <= order) writeRun(previous);
      for (let length = contextLength; length >= differs; length--) closeNode(length);
    }
    for (let length = differs; length <= contextLength; length++) openNode(length, digit(position, length));
    runLength++;
  }
  writeRun(sorted[sorted.length - 1]);
  for (let length = contextLength; length >= 1; length--) closeNode(length);
  while (levels[0].continuationOffsets.length < vocabularySize) pushNode(1);
  // Close each level's child ranges with the next level's node count (before offsets get their own sentinel).
  for (let length = 1; length < contextLength; length++) levels[length - 1].childOffsets.push(levels[length].continuationOffsets.length);

  const builtLevels = levels.map((level, index) => finishLevel(level, index + 1));
  return { order, vocabulary, unigram: finishUnigram(unigramCounts), levels: builtLevels };
}

function finishLevel(counts: LevelCounts, length: number): LocalModelLevel {
  const offsets = counts.continuationOffsets;
  const nodeCount = offsets.length;
  offsets.push(counts.continuationTokens.length);
  const continuationCounts = counts.continuationCounts.toArray();
  const discounts = modifiedKneserNeyDiscounts(continuationCounts);
  const continuationOffsets = offsets.toArray();
  const probabilities = new Float32Array(continuationCounts.length);
  for (let node = 0; node < nodeCount; node++) {
    const start = continuationOffsets[node];
    const end = continuationOffsets[node + 1];
    let total = 0;
    for (let entry = start; entry < end; entry++) total += continuationCounts[entry];
    for (let entry = start; entry < end; entry++) {
      const count = continuationCounts[entry];
      probabilities[entry] = Math.max(count - discounts[Math.min(count, 3)], 0) / total;
    }
  }
  return {
    length,
    nodeCount,
    nodeTokens: Uint16Array.from(counts.nodeTokens.toArray()),
    continuationOffsets,
    continuationTokens: Uint16Array.from(counts.continuationTokens.toArray()),
    continuationProbabilities: probabilities,
    childOffsets: counts.childOffsets.toArray(),
  };
}

/** Kneser-Ney continuation unigram, interpolated with the uniform distribution by the discounted mass. */
function finishUnigram(continuationCounts: Uint32Array): Float64Array {
  const discounts = modifiedKneserNeyDiscounts(continuationCounts);
  const size = continuationCounts.length;
  let total = 0;
  let discounted = 0;
  for (const count of continuationCounts) {
    total += count;
    if (count > 0) discounted += discounts[Math.min(count, 3)];
  }
  const unigram = new Float64Array(size);
  const floor = discounted / total / size;
  for (let token = 0; token < size; token++) {
    const count = continuationCounts[token];
    unigram[token] = Math.max(count - discounts[Math.min(count, 3)], 0) / total + floor;
  }
  return unigram;
}
