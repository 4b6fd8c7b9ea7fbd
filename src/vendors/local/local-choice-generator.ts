/**
 * Generates one choice (or one best_of candidate) token by token: sample, score, assemble
 * characters, enforce stop sequences, and yield text deltas as they become final. Every 64 tokens
 * it yields to the event loop so one long completion cannot starve other requests, and it checks
 * the abort signal before every token.
 */
import type { FinishReason, StreamPart, TokenLogprob } from '../types.js';
import { LocalChoiceOutput } from './local-choice-output.js';
import { pushHistory } from './local-echo.js';
import { generatedTokenLogprob, logprobRecord } from './local-logprobs.js';
import type { LocalNgramModel } from './local-ngram-model.js';
import type { LocalRandom } from './local-random.js';
import { LocalSampler, type LocalSamplingSettings } from './local-sampler.js';
import type { LocalTokenTexts } from './local-token-text.js';
import { LocalUtf8Assembler } from './local-utf8-assembler.js';
import type { LocalWorkspacePool } from './local-workspace.js';

const TOKENS_BETWEEN_YIELDS = 64;

export interface LocalChoiceJob {
  model: LocalNgramModel;
  texts: LocalTokenTexts;
  pool: LocalWorkspacePool;
  sampling: LocalSamplingSettings;
  /** Context after the prompt (latest first, vocabulary indexes). */
  history: Int32Array;
  /** The echoed prompt delta, sent first; null without echo. */
  echo: { text: string; logprobs: TokenLogprob[] | null } | null;
  choice: number;
  maxTokens: number;
  stop: readonly string[];
  /** Top alternatives per token (0–5), or null for no logprobs. */
  logprobs: number | null;
  /** Whether to sum the tokens' logprobs (for best_of ranking). */
  score: boolean;
  random: LocalRandom;
  signal: AbortSignal;
}

export interface LocalChoiceResult {
  /** Tokens generated (what the compute cost); the end-of-text token is not counted. */
  completionTokens: number;
  /** Sum of the model logprobs of the generated tokens, end-of-text included. */
  logprobSum: number;
  scoredTokens: number;
  aborted: boolean;
}

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export async function* generateChoice(job: LocalChoiceJob, result: LocalChoiceResult): AsyncGenerator<StreamPart[]> {
  const { model, texts, choice } = job;
  // Parts of one compute slice (between event-loop yields) leave as one batch.
  let batch: StreamPart[] = [];
  if (job.echo && job.echo.text.length > 0) {
    batch.push(job.echo.logprobs ? { type: 'text-delta', choice, text: job.echo.text, logprobs: job.echo.logprobs } : { type: 'text-delta', choice, text: job.echo.text });
  }
  const workspace = job.pool.acquire();
  const sampler = new LocalSampler(model, workspace, job.sampling);
  try {
    const output = new LocalChoiceOutput(choice, job.stop, job.logprobs !== null);
    const assembler = new LocalUtf8Assembler(texts);
    const history = Int32Array.from(job.history);
    const nodes = new Int32Array(model.order - 1);
    const wantsProbability = job.score || job.logprobs !== null;
    const topTokens = new Int32Array(Math.max(job.logprobs ?? 0, 0));
    const topProbabilities = new Float64Array(topTokens.length);
    let unitEntries: TokenLogprob[] | null = job.logprobs !== null ? [] : null;
    let finishReason: FinishReason = 'length';
    for (let step = 0; step < job.maxTokens; step++) {
      if (step > 0 && step % TOKENS_BETWEEN_YIELDS === 0) {
        if (batch.length > 0) {
          yield batch;
          batch = [];
        }
        await yieldToEventLoop();
      }
      if (job.signal.aborted) {
        result.aborted = true;
        if (batch.length > 0) yield batch;
        return;
      }
      model.findNodes(history, nodes);
      const token = sampler.next(nodes, job.random);
      let logprob = 0;
      if (wantsProbability) {
        logprob = Math.log(sampler.modelProbability(nodes, token));
        result.logprobSum += logprob;
        result.scoredTokens++;
      }
      const top = unitEntries && job.logprobs! > 0 ? logprobRecord(texts, topTokens, topProbabilities, sampler.top(nodes, job.logprobs!, topTokens, topProbabilities)) : null;
      if (token === model.endOfText) {
        finishReason = 'stop';
        break;
      }
      result.completionTokens++;
      sampler.record(token);
      pushHistory(history, token);
      if (unitEntries) {
        unitEntries.push(generatedTokenLogprob(texts.strings[token], logprob, top ?? {}));
      }
      const text = assembler.push(token);
      if (text === null) continue;
      const part = output.push(text, unitEntries);
      if (unitEntries) unitEntries = [];
      if (part) batch.push(part);
      if (output.stopped) {
        finishReason = 'stop';
        break;
      }
    }
    if (!output.stopped) {
      if (assembler.holding) {
        const part = output.push(assembler.flush(), unitEntries);
        if (part) batch.push(part);
      }
      if (output.stopped) finishReason = 'stop';
      else {
        const part = output.finish();
        if (part) batch.push(part);
      }
    }
    batch.push({ type: 'finish', choice, finishReason });
    yield batch;
  } finally {
    sampler.release();
    job.pool.release(workspace);
  }
}
