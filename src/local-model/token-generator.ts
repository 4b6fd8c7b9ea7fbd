/**
 * Generates one sequence token by token: find the context's trie nodes, draw the next token with
 * the sampler, score it with the model's own distribution, and assemble byte fragments into
 * characters. Stop sequences, batching and the wire shape belong to the caller; this only says
 * what each step produced.
 */
import { pushHistory } from './context-history.js';
import { logOf, logprobRecord } from './logprobs.js';
import type { LocalRuntime } from './model-loader.js';
import { NO_TOKEN, type LocalNgramModel } from './ngram-model.js';
import type { RandomSource } from './random.js';
import { LocalSampler, type LocalSamplingSettings } from './sampler.js';
import { LocalTokenTexts } from './token-text.js';
import { LocalUtf8Assembler } from './utf8-assembler.js';
import type { LocalWorkspace, LocalWorkspacePool } from './workspace.js';

/** What one sequence is generated from. */
export interface LocalGenerationOptions {
  /** The loaded model, its token texts and its workspaces. */
  runtime: LocalRuntime;
  /** Temperature, top_p, logit bias and penalties in model terms. */
  sampling: LocalSamplingSettings;
  /** Context after the prompt (latest first, vocabulary indexes; see context-history.ts). */
  history: Int32Array;
  random: RandomSource;
  /** Alternatives to report per token (0–5), or null for none. */
  alternatives: number | null;
  /** Whether every token's logprob is needed even without alternatives (for best_of ranking). */
  score: boolean;
}

/** One step's outcome. */
export interface GeneratedToken {
  /** The model chose end-of-text: the sequence is over, and this token is not part of it. */
  ended: boolean;
  /** The text this token completes; null while a character still waits for more bytes. */
  text: string | null;
  /** The token's logprobs spelling (its text, `bytes:\xNN…`, or a special token's name). */
  tokenText: string;
  /** The model's own log probability of the token (0 when neither scoring nor alternatives were asked for). */
  logprob: number;
  /** The most likely alternatives of this step, by model probability; null when not asked for. */
  alternatives: Record<string, number> | null;
}

export class LocalTokenGenerator {
  private readonly model: LocalNgramModel;
  private readonly texts: LocalTokenTexts;
  /** Texts of the ids outside the vocabulary that the bias lifts (index i: sampler index vocabularySize + i). */
  private readonly outsideTexts: LocalTokenTexts;
  private readonly pool: LocalWorkspacePool;
  private readonly workspace: LocalWorkspace;
  private readonly sampler: LocalSampler;
  private readonly assembler: LocalUtf8Assembler;
  private readonly history: Int32Array;
  private readonly nodes: Int32Array;
  private readonly random: RandomSource;
  private readonly wantsProbability: boolean;
  private readonly alternatives: number;
  private readonly topTokens: Int32Array;
  private readonly topProbabilities: Float64Array;

  constructor(options: LocalGenerationOptions) {
    const { model, texts, pool } = options.runtime;
    this.model = model;
    this.texts = texts;
    this.outsideTexts = new LocalTokenTexts(options.sampling.outsideTokens);
    this.pool = pool;
    this.workspace = pool.acquire();
    this.sampler = new LocalSampler(model, this.workspace, options.sampling);
    this.assembler = new LocalUtf8Assembler(texts);
    this.history = Int32Array.from(options.history);
    this.nodes = new Int32Array(model.order - 1);
    this.random = options.random;
    this.wantsProbability = options.score || options.alternatives !== null;
    this.alternatives = options.alternatives ?? 0;
    this.topTokens = new Int32Array(this.alternatives);
    this.topProbabilities = new Float64Array(this.alternatives);
  }

  /** Draws the next token. After an `ended` step, call only `flush` and `release`. */
  next(): GeneratedToken {
    const { model, sampler, nodes } = this;
    model.findNodes(this.history, nodes);
    const token = sampler.next(nodes, this.random);
    const logprob = this.wantsProbability ? logOf(sampler.modelProbability(nodes, token)) : 0;
    const alternatives =
      this.alternatives > 0
        ? logprobRecord(this.texts, this.topTokens, this.topProbabilities, sampler.top(nodes, this.alternatives, this.topTokens, this.topProbabilities))
        : null;
    if (token === model.endOfText) return { ended: true, text: null, tokenText: this.texts.strings[token], logprob, alternatives };
    sampler.record(token);
    if (token < model.vocabularySize) {
      pushHistory(this.history, token);
      return { ended: false, text: this.assembler.push(token), tokenText: this.texts.strings[token], logprob, alternatives };
    }
    // An id the model never saw: the context after it backs off, as after any unseen prompt token.
    const outside = token - model.vocabularySize;
    pushHistory(this.history, NO_TOKEN);
    return { ended: false, text: this.assembler.push(outside, this.outsideTexts), tokenText: this.outsideTexts.strings[outside], logprob, alternatives };
  }

  /** Text still held back for an incomplete character (at the end of the sequence); null when none. */
  flush(): string | null {
    return this.assembler.holding ? this.assembler.flush() : null;
  }

  /** Returns the scratch memory to the pool; the generator is unusable afterwards. */
  release(): void {
    this.sampler.release();
    this.pool.release(this.workspace);
  }
}
