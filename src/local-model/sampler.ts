/**
 * The next token of one choice, sampled as OpenAI documents its parameters:
 *
 *   logit[w] = log P(w | context) + logit_bias[w] − count[w]·frequency_penalty − (count[w] > 0)·presence_penalty
 *   token    ~ softmax(logit / temperature), restricted to the top_p nucleus; argmax when temperature is 0.
 *
 * Three exact paths, cheapest first: the model's own mixture sampler when nothing changes the
 * distribution; rejection sampling from it when the change only sharpens it (temperature in
 * [0.5, 1], logits only lowered, no top_p); otherwise the prepared step (step.ts, tempered-draw.ts).
 */
import type { LocalLogitBias } from './logit-bias.js';
import type { LocalNgramModel } from './ngram-model.js';
import type { RandomSource } from './random.js';
import { LocalStep } from './step.js';
import { LocalTemperedDraw } from './tempered-draw.js';
import { temperatureTable } from './temperature-table.js';
import type { LocalWorkspace } from './workspace.js';

/** How one choice samples; the bias is resolved against the model (see logit-bias.ts). */
export interface LocalSamplingSettings extends LocalLogitBias {
  /** ≥ 0; 0 means greedy. */
  temperature: number;
  /** In [0, 1]; 1 means no nucleus restriction. */
  topP: number;
  /** −2 … 2, subtracted once from the logit of every token already generated. */
  presencePenalty: number;
  /** −2 … 2, subtracted from a token's logit once per time it was generated. */
  frequencyPenalty: number;
}

/** Rejection attempts per step before the full evaluation takes over. */
const DRAW_ATTEMPTS = 32;
/** Below this temperature acceptance falls steeply ((p/bound)^(1/T − 1)), so the full evaluation is faster. */
const LOWEST_REJECTION_TEMPERATURE = 0.5;

export class LocalSampler {
  /** Whether the sampling distribution is the model's own. */
  private readonly plain: boolean;
  private readonly rejection: boolean;
  private readonly penalised: boolean;
  private readonly step: LocalStep;
  private readonly draw: LocalTemperedDraw | null;
  /** How many of the workspace's `adjustedTokens` this choice adjusts (bias, penalties). */
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
    this.step = new LocalStep(model, workspace);
    const table = settings.temperature > 0 && !this.plain ? temperatureTable(model, 1 / settings.temperature) : null;
    this.draw = table && new LocalTemperedDraw(model, workspace, this.step, table);
    settings.biasTokens.forEach((token, index) => {
      this.mark(token);
      workspace.adjustments[token] += settings.biasValues[index];
    });
  }

  /** The next token (vocabulary index) after the context whose trie nodes are `nodes`. */
  next(nodes: Int32Array, random: RandomSource): number {
    this.step.ready = false;
    if (this.plain) return this.model.sample(nodes, random);
    if (this.rejection) {
      const token = this.drawByRejection(nodes, random);
      if (token >= 0) return token;
    }
    this.step.prepare(nodes, this.adjustedCount);
    return this.settings.temperature === 0 ? this.greedy() : (this.draw as LocalTemperedDraw).sample(random, this.settings.topP);
  }

  /** The model's probability of `token` in this step (not the adjusted sampling distribution); 0 outside the vocabulary. */
  modelProbability(nodes: Int32Array, token: number): number {
    if (token >= this.model.vocabularySize) return 0;
    return this.step.ready ? this.step.probability(token) : this.model.probability(nodes, token);
  }

  /** The `count` most likely tokens of this step by model probability, most likely first; returns how many. */
  top(nodes: Int32Array, count: number, tokens: Int32Array, probabilities: Float64Array): number {
    if (!this.step.ready) this.step.prepare(nodes, this.adjustedCount);
    return this.step.top(count, tokens, probabilities);
  }

  /** Counts a generated token for the penalties. */
  record(token: number): void {
    if (!this.penalised) return;
    const workspace = this.workspace;
    this.mark(token);
    if (workspace.generatedCounts[token]++ === 0) workspace.adjustments[token] -= this.settings.presencePenalty;
    workspace.adjustments[token] -= this.settings.frequencyPenalty;
  }

  private mark(token: number): void {
    if (this.workspace.adjusted[token]) return;
    this.workspace.adjusted[token] = 1;
    this.workspace.adjustedTokens[this.adjustedCount++] = token;
  }

  /** Leaves the workspace's per-choice arrays clean for its next user. */
  release(): void {
    const workspace = this.workspace;
    for (let index = 0; index < this.adjustedCount; index++) {
      const token = workspace.adjustedTokens[index];
      workspace.adjusted[token] = 0;
      workspace.adjustments[token] = 0;
      workspace.generatedCounts[token] = 0;
    }
    this.adjustedCount = 0;
  }

  /** Proposal P(w), target ∝ P^(1/T)·exp(adjustment/T): the ratio (P/bound)^(1/T − 1)·exp(adjustment/T) ≤ 1 here; −1 if all fail. */
  private drawByRejection(nodes: Int32Array, random: RandomSource): number {
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

  private greedy(): number {
    const step = this.step;
    const { touched, touchedCount, mass, adjusted, adjustments } = this.workspace;
    step.resetStream();
    let bestPlain = step.headToken;
    let bestPlainProbability = bestPlain >= 0 ? step.betaOne * step.headBase : -1;
    let bestAdjusted = -1;
    let bestAdjustedLogit = -Infinity;
    for (let index = 0; index < touchedCount; index++) {
      const token = touched[index];
      const probability = mass[token];
      if (adjusted[token]) {
        const logit = Math.log(probability) + adjustments[token];
        if (logit > bestAdjustedLogit) {
          bestAdjustedLogit = logit;
          bestAdjusted = token;
        }
      } else if (probability > bestPlainProbability || (probability === bestPlainProbability && token < bestPlain)) {
        bestPlainProbability = probability;
        bestPlain = token;
      }
    }
    if (bestAdjusted >= 0 && (bestPlain < 0 || bestAdjustedLogit > Math.log(bestPlainProbability))) return bestAdjusted;
    return bestPlain;
  }
}
