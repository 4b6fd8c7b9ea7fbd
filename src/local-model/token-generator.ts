/**
 * Generates one sequence token by token: find the context's trie nodes, draw the next token with
 * the sampler, score it with the model's own distribution, and assemble byte fragments into
 * characters. Stop sequences, batching and the wire shape belong to the caller.
 */
import { pushHistory } from './context-history.js';
import { logOf, logprobRecord, type ScoredToken, scoredToken } from './logprobs.js';
import type { LocalRuntime } from './model-loader.js';
import { NO_TOKEN } from './ngram-model.js';
import type { RandomSource } from './random.js';
import { LocalSampler, type LocalSamplingSettings } from './sampler.js';
import { LocalTokenTexts } from './token-text.js';
import { LocalUtf8Assembler } from './utf8-assembler.js';
import type { LocalWorkspace } from './workspace.js';

export interface LocalGenerationOptions {
  runtime: LocalRuntime;
  sampling: LocalSamplingSettings;
  /** Context after the prompt (latest first, vocabulary indexes; see context-history.ts). */
  history: Int32Array;
  random: RandomSource;
  /** Alternatives to report per token (0–5), or null for no logprobs. */
  logprobs: number | null;
  /** Whether every token's logprob is needed even without logprobs (for best_of ranking). */
  score: boolean;
}

export interface GeneratedToken {
  /** The model chose end-of-text: the sequence is over, and this token is not part of it. */
  ended: boolean;
  /** The text this token completes; null while a character still waits for more bytes. */
  text: string | null;
  /** The model's own log probability of the token (0 when neither scoring nor logprobs asked for it). */
  logprob: number;
  /** The token's logprobs entry with its alternatives; null without logprobs. */
  entry: ScoredToken | null;
}

export class LocalTokenGenerator {
  /** Texts of the ids outside the vocabulary that the bias lifts (sampler index vocabularySize + i). */
  private readonly outsideTexts: LocalTokenTexts;
  private readonly workspace: LocalWorkspace;
  private readonly sampler: LocalSampler;
  private readonly assembler: LocalUtf8Assembler;
  private readonly history: Int32Array;
  private readonly nodes: Int32Array;
  private readonly topTokens: Int32Array;
  private readonly topProbabilities: Float64Array;

  constructor(private readonly options: LocalGenerationOptions) {
    const { model, texts, pool } = options.runtime;
    this.outsideTexts = new LocalTokenTexts(options.sampling.outsideTokens);
    this.workspace = pool.acquire();
    this.sampler = new LocalSampler(model, this.workspace, options.sampling);
    this.assembler = new LocalUtf8Assembler(texts);
    this.history = Int32Array.from(options.history);
    this.nodes = new Int32Array(model.order - 1);
    this.topTokens = new Int32Array(options.logprobs ?? 0);
    this.topProbabilities = new Float64Array(options.logprobs ?? 0);
  }

  /** Draws the next token. After an `ended` step, call only `flush` and `release`. */
  next(): GeneratedToken {
    const { sampler, nodes, topTokens, topProbabilities, options } = this;
    const { model, texts } = options.runtime;
    model.findNodes(this.history, nodes);
    const token = sampler.next(nodes, options.random);
    const logprob = options.score || options.logprobs !== null ? logOf(sampler.modelProbability(nodes, token)) : 0;
    const alternatives =
      topTokens.length > 0 ? logprobRecord(texts, topTokens, topProbabilities, sampler.top(nodes, topTokens.length, topTokens, topProbabilities)) : null;
    if (token === model.endOfText) return { ended: true, text: null, logprob, entry: null };
    sampler.record(token);
    // An id the model never saw: the context after it backs off, as after any unseen prompt token.
    const known = token < model.vocabularySize;
    pushHistory(this.history, known ? token : NO_TOKEN);
    const spelled = known ? texts : this.outsideTexts;
    const index = known ? token : token - model.vocabularySize;
    const entry = options.logprobs === null ? null : scoredToken(spelled.strings[index], logprob, alternatives ?? {});
    return { ended: false, text: this.assembler.push(index, spelled), logprob, entry };
  }

  /** Text still held back for an incomplete character (at the end of the sequence); null when none. */
  flush(): string | null {
    return this.assembler.flush();
  }

  /** Returns the scratch memory to the pool; the generator is unusable afterwards. */
  release(): void {
    this.sampler.release();
    this.options.runtime.pool.release(this.workspace);
  }
}
