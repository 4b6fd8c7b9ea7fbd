/**
 * Turns the model's distribution into the next token the way OpenAI documents its sampling
 * parameters, for one choice:
 *
 *   logit[w] = log P(w | context) + logit_bias[w] − count[w]·frequency_penalty − (count[w] > 0)·presence_penalty
 *   token    ~ softmax(logit / temperature), restricted to the top_p nucleus; argmax when temperature is 0.
 *
 * When none of that changes the distribution (temperature 1, top_p 1, no bias, no penalties) the
 * model's own mixture sampler is used, which is exact and cheaper. When the change only sharpens
 * it (temperature in [0.5, 1], adjustments that only lower logits, no top_p), rejection sampling
 * from the model's distribution is exact too and avoids evaluating every candidate; only the rest
 * (greedy, top_p, high temperature, raised logits) evaluates the whole step. Logit bias applies only to
 * tokens the model can emit; a token it never saw has logit −∞, which no finite bias lifts.
 */
import type { LocalNgramModel } from './local-ngram-model.js';
import type { LocalRandom } from './local-random.js';
import { temperatureTable, type LocalTemperatureTable } from './local-temperature-table.js';
import type { LocalWorkspace } from './local-workspace.js';

export interface LocalSamplingSettings {
  /** ≥ 0; 0 means greedy. */
  temperature: number;
  /** In [0, 1]; 1 means no nucleus restriction. */
  topP: number;
  /** Biased vocabulary indexes and their biases (non-zero, emittable tokens only). */
  biasTokens: Int32Array;
  biasValues: Float64Array;
  presencePenalty: number;
  frequencyPenalty: number;
}

const REJECTION_ATTEMPTS = 256;
/** Rejection attempts per step before the exact full evaluation takes over (still exact: an accepted draw is exact whenever it happens). */
const DRAW_ATTEMPTS = 32;
/** Below this temperature acceptance falls steeply ((p/bound)^(1/T − 1)), so the full evaluation is faster. */
const LOWEST_REJECTION_TEMPERATURE = 0.5;
const floatView = new Float32Array(1);
const floatBits = new Uint32Array(floatView.buffer);

export class LocalSampler {
  /** Whether the sampling distribution is the model's own (so the mixture sampler is exact). */
  readonly plain: boolean;
  /** Whether steps first try rejection sampling from the model's distribution. */
  private readonly rejection: boolean;
  /** Whether the workspace holds the current step's distribution (touched mass and `beta`). */
  accumulated = false;
  /** Weight of the dense unigram part in the current step (valid when `accumulated`). */
  beta = 0;
  private readonly penalised: boolean;
  private readonly table: LocalTemperatureTable | null;
  /** Tokens whose logit is adjusted in this choice (bias, penalties), `adjustedCount` of them. */
  private readonly adjustedTokens: Int32Array;
  private adjustedCount = 0;

  constructor(
    private readonly model: LocalNgramModel,
    private readonly workspace: LocalWorkspace,
    private readonly settings: LocalSamplingSettings,
  ) {
    this.penalised = settings.presencePenalty !== 0 || settings.frequencyPenalty !== 0;
    this.plain = settings.temperature === 1 && settings.topP >= 1 && settings.biasTokens.length === 0 && !this.penalised;
    const onlyLowers = settings.biasValues.every((value) => value <= 0) && settings.presencePenalty >= 0 && settings.frequencyPenalty >= 0;
    this.rejection = !this.plain && onlyLowers && settings.topP >= 1 && settings.temperature >= LOWEST_REJECTION_TEMPERATURE && settings.temperature <= 1;
    this.table = settings.temperature > 0 && !this.plain ? temperatureTable(model, 1 / settings.temperature) : null;
    this.adjustedTokens = new Int32Array(model.vocabularySize);
    settings.biasTokens.forEach((token, index) => {
      if (!workspace.adjusted[token]) {
        workspace.adjusted[token] = 1;
        this.adjustedTokens[this.adjustedCount++] = token;
      }
      workspace.adjustments[token] += settings.biasValues[index];
    });
  }

  /** The next token (vocabulary index) after the context whose trie nodes are `nodes`. */
  next(nodes: Int32Array, random: LocalRandom): number {
    if (this.plain) {
      this.accumulated = false;
      return this.model.sample(nodes, random);
    }
    if (this.rejection) {
      this.accumulated = false;
      const token = this.drawByRejection(nodes, random);
      if (token >= 0) return token;
    }
    this.accumulate(nodes);
    const workspace = this.workspace;
    for (let index = 0; index < this.adjustedCount; index++) workspace.touch(this.adjustedTokens[index]);
    return this.settings.temperature === 0 ? this.greedy() : this.sampleTempered(random);
  }

  /** Makes the workspace hold the full distribution of this step (for top logprobs). */
  accumulate(nodes: Int32Array): void {
    this.beta = this.model.accumulate(nodes, this.workspace);
    this.accumulated = true;
  }

  /** The model's probability of `token` in this step (not the adjusted sampling distribution). */
  modelProbability(nodes: Int32Array, token: number): number {
    if (!this.accumulated) return this.model.probability(nodes, token);
    const workspace = this.workspace;
    const sparse = workspace.stamps[token] === workspace.currentStamp ? workspace.mass[token] : 0;
    return sparse + this.beta * this.model.unigram[token];
  }

  /** Counts a generated token for the penalties. */
  record(token: number): void {
    if (!this.penalised) return;
    const workspace = this.workspace;
    if (!workspace.adjusted[token]) {
      workspace.adjusted[token] = 1;
      this.adjustedTokens[this.adjustedCount++] = token;
    }
    if (workspace.generatedCounts[token]++ === 0) workspace.adjustments[token] -= this.settings.presencePenalty;
    workspace.adjustments[token] -= this.settings.frequencyPenalty;
  }

  /** Leaves the workspace's per-choice arrays clean for its next user. */
  release(): void {
    const workspace = this.workspace;
    for (let index = 0; index < this.adjustedCount; index++) {
      const token = this.adjustedTokens[index];
      workspace.adjusted[token] = 0;
      workspace.adjustments[token] = 0;
      workspace.generatedCounts[token] = 0;
    }
    this.adjustedCount = 0;
  }

  /**
   * Target ∝ P(w)^(1/T)·exp(adjustment(w)/T), proposal P(w): the ratio is (P/bound)^(1/T − 1)·
   * exp(adjustment/T) ≤ 1 because adjustments are ≤ 0 here. Returns −1 when every attempt was rejected.
   */
  private drawByRejection(nodes: Int32Array, random: LocalRandom): number {
    const model = this.model;
    const exponent = 1 / this.settings.temperature - 1;
    const inverse = 1 / this.settings.temperature;
    const bound = exponent > 0 ? model.probabilityBound(nodes) : 1;
    const { adjusted, adjustments } = this.workspace;
    for (let attempt = 0; attempt < DRAW_ATTEMPTS; attempt++) {
      const token = model.sample(nodes, random);
      let acceptance = exponent > 0 ? Math.exp(exponent * Math.log(model.probability(nodes, token) / bound)) : 1;
      if (adjusted[token]) acceptance *= Math.exp(inverse * adjustments[token]);
      if (random.next() < acceptance) return token;
    }
    return -1;
  }

  /** The best untouched token: the first one in unigram order (its probability is β·unigram). */
  private bestUntouched(): number {
    const { stamps, currentStamp } = this.workspace;
    const order = this.model.unigramOrder;
    for (let rank = 0; rank < order.length; rank++) if (stamps[order[rank]] !== currentStamp) return order[rank];
    return -1;
  }

  private greedy(): number {
    const { touched, touchedCount, mass, adjusted, adjustments } = this.workspace;
    const unigram = this.model.unigram;
    const beta = this.beta;
    let bestPlain = this.bestUntouched();
    let bestPlainProbability = bestPlain >= 0 ? beta * unigram[bestPlain] : -1;
    let bestAdjusted = -1;
    let bestAdjustedLogit = -Infinity;
    for (let index = 0; index < touchedCount; index++) {
      const token = touched[index];
      const probability = mass[token] + beta * unigram[token];
      if (adjusted[token]) {
        const logit = Math.log(probability) + adjustments[token];
        if (logit > bestAdjustedLogit) {
          bestAdjustedLogit = logit;
          bestAdjusted = token;
        }
      } else if (probability > bestPlainProbability) {
        bestPlainProbability = probability;
        bestPlain = token;
      }
    }
    if (bestAdjusted >= 0 && (bestPlain < 0 || bestAdjustedLogit > Math.log(bestPlainProbability))) return bestAdjusted;
    return bestPlain;
  }

  private sampleTempered(random: LocalRandom): number {
    const workspace = this.workspace;
    const { touched, touchedCount, mass, adjusted, adjustments, weights } = workspace;
    const table = this.table as LocalTemperatureTable;
    const inverse = table.inverseTemperature;
    const unigram = this.model.unigram;
    const beta = this.beta;

    // Pass 1: the largest tempered logit, so pass 2 can work with weights ≤ 1 (no overflow).
    const untouched = this.bestUntouched();
    let maxPlain = untouched >= 0 ? beta * unigram[untouched] : 0;
    for (let index = 0; index < touchedCount; index++) {
      const token = touched[index];
      if (adjusted[token]) continue;
      const probability = mass[token] + beta * unigram[token];
      if (probability > maxPlain) maxPlain = probability;
    }
    let maxLogit = maxPlain > 0 ? inverse * Math.log(maxPlain) : -Infinity;
    for (let index = 0; index < touchedCount; index++) {
      const token = touched[index];
      if (!adjusted[token]) continue;
      const logit = inverse * (Math.log(mass[token] + beta * unigram[token]) + adjustments[token]);
      weights[token] = logit;
      if (logit > maxLogit) maxLogit = logit;
    }

    // Pass 2: weights relative to exp(maxLogit); `reference` is the probability whose tempered logit that is.
    const inverseReference = Math.exp(-maxLogit / inverse);
    let total = 0;
    let touchedTable = 0;
    for (let index = 0; index < touchedCount; index++) {
      const token = touched[index];
      let weight: number;
      if (adjusted[token]) weight = Math.exp(weights[token] - maxLogit);
      else {
        const relative = (mass[token] + beta * unigram[token]) * inverseReference;
        weight = inverse === 1 ? relative : Math.exp(inverse * Math.log(relative));
      }
      weights[token] = weight;
      total += weight;
      touchedTable += table.weights[token];
    }
    const tailBase = beta * table.unigramMax * inverseReference;
    const tailScale = inverse === 1 ? tailBase : Math.pow(tailBase, inverse);
    const tailMass = tailScale * Math.max(table.total - touchedTable, 0);

    if (this.settings.topP < 1) return this.sampleNucleus(random, total + tailMass, tailScale);
    let target = random.next() * (total + tailMass);
    for (let index = 0; index < touchedCount; index++) {
      target -= weights[touched[index]];
      if (target < 0) return touched[index];
    }
    if (tailMass > 0) return this.sampleTail(random);
    for (let index = touchedCount - 1; index >= 0; index--) if (weights[touched[index]] > 0) return touched[index];
    return touched[0];
  }

  /** An untouched token with probability ∝ its table weight: rejection first, an exact scan if that keeps failing. */
  private sampleTail(random: LocalRandom): number {
    const table = this.table as LocalTemperatureTable;
    const { stamps, currentStamp } = this.workspace;
    for (let attempt = 0; attempt < REJECTION_ATTEMPTS; attempt++) {
      const token = findCumulative(table.cumulative, random.next() * table.total);
      if (stamps[token] !== currentStamp) return token;
    }
    let remaining = 0;
    for (let token = 0; token < table.weights.length; token++) if (stamps[token] !== currentStamp) remaining += table.weights[token];
    let target = random.next() * remaining;
    let last = -1;
    for (let token = 0; token < table.weights.length; token++) {
      if (stamps[token] === currentStamp) continue;
      last = token;
      target -= table.weights[token];
      if (target < 0) return token;
    }
    return last >= 0 ? last : this.workspace.touched[0];
  }

  /**
   * top_p: the smallest set of most likely tokens whose mass reaches top_p (the token that crosses
   * the threshold included), then a draw inside it. Sorting every candidate would dominate the
   * step, so weights are bucketed by value (quarter octaves): buckets are summed from the top until
   * they reach the target; every token above the crossing bucket is in the nucleus, and only the
   * crossing bucket is sorted to find where inside it the nucleus ends. Untouched tokens are
   * already in order (unigram order) and join bucket by bucket.
   */
  private sampleNucleus(random: LocalRandom, total: number, tailScale: number): number {
    const workspace = this.workspace;
    const { touched, touchedCount, weights, sortKeys, nucleusTokens, nucleusWeights, stamps, currentStamp } = workspace;
    const table = this.table as LocalTemperatureTable;
    const order = this.model.unigramOrder;
    const target = this.settings.topP * total;
    bucketMass.fill(0);
    for (let index = 0; index < touchedCount; index++) {
      const weight = weights[touched[index]];
      bucketMass[bucketOf(weight)] += weight;
    }
    let rank = 0;
    let crossing = BUCKETS;
    let above = 0;
    for (let bucket = 0; bucket <= BUCKETS; bucket++) {
      const lower = bucketLower[bucket];
      for (; rank < order.length; rank++) {
        const token = order[rank];
        if (stamps[token] === currentStamp) continue;
        const weight = tailScale * table.weights[token];
        if (weight < lower) break;
        weights[token] = weight;
        bucketMass[bucket] += weight;
      }
      if (bucketMass[bucket] > 0 && above + bucketMass[bucket] >= target) {
        crossing = bucket;
        break;
      }
      above += bucketMass[bucket];
    }
    // Sort the crossing bucket only and keep its top part until the nucleus reaches the target.
    let candidates = 0;
    const addCandidate = (token: number): void => {
      floatView[0] = weights[token];
      // Positive float32 bit patterns sort like the floats; the token rides in the low 16 bits.
      sortKeys[candidates++] = floatBits[0] * 65536 + token;
    };
    for (let index = 0; index < touchedCount; index++) if (bucketOf(weights[touched[index]]) === crossing) addCandidate(touched[index]);
    for (let index = 0; index < rank; index++) {
      const token = order[index];
      if (stamps[token] !== currentStamp && bucketOf(weights[token]) === crossing) addCandidate(token);
    }
    const keys = sortKeys.subarray(0, candidates).sort();
    let count = 0;
    let mass = above;
    for (let index = candidates - 1; index >= 0 && (mass < target || (count === 0 && above === 0)); index--) {
      const token = keys[index] % 65536;
      nucleusTokens[count] = token;
      nucleusWeights[count++] = weights[token];
      mass += weights[token];
    }
    // Draw: first among the tokens above the crossing bucket, then inside its kept part.
    let draw = random.next() * mass;
    if (draw < above) {
      for (let index = 0; index < touchedCount; index++) {
        const token = touched[index];
        if (bucketOf(weights[token]) >= crossing) continue;
        draw -= weights[token];
        if (draw < 0) return token;
      }
      for (let index = 0; index < rank; index++) {
        const token = order[index];
        if (stamps[token] === currentStamp || bucketOf(weights[token]) >= crossing) continue;
        draw -= weights[token];
        if (draw < 0) return token;
      }
      draw = 0; // rounding: fall through to the kept part
    } else draw -= above;
    for (let index = 0; index < count; index++) {
      draw -= nucleusWeights[index];
      if (draw < 0) return nucleusTokens[index];
    }
    return count > 0 ? nucleusTokens[count - 1] : touched[0];
  }
}

/** Four buckets per octave below 1: bucket b holds weights in [bucketLower[b], bucketLower[b − 1]); the last holds the rest. */
const BUCKETS = 256;
const bucketMass = new Float64Array(BUCKETS + 1);
const bucketLower = Float64Array.from({ length: BUCKETS + 1 }, (_, bucket) =>
  bucket === BUCKETS ? 0 : Math.pow(2, -1 - Math.floor(bucket / 4)) * (1 + (3 - (bucket % 4)) / 4),
);
const doubleView = new Float64Array(1);
const doubleWords = new Uint32Array(doubleView.buffer);

/** Bucket of a weight from its binary exponent and top two mantissa bits (no logarithm needed). */
function bucketOf(weight: number): number {
  if (weight <= 0) return BUCKETS;
  if (weight >= 1) return 0;
  doubleView[0] = weight;
  const high = doubleWords[1];
  const exponent = ((high >>> 20) & 0x7ff) - 1023;
  const bucket = (-exponent - 1) * 4 + (3 - ((high >>> 18) & 3));
  return bucket < BUCKETS ? bucket : BUCKETS;
}

function findCumulative(cumulative: Float64Array, target: number): number {
  let low = 0;
  let high = cumulative.length - 1;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (cumulative[middle] > target) high = middle;
    else low = middle + 1;
  }
  return low;
}
