/**
 * One choice (or one best_of candidate) as stream parts: the engine's token generator supplies the
 * tokens, their text and their scores; this enforces max_tokens and stop sequences and yields text
 * deltas as they become final. Every 64 tokens it yields to the event loop so one long completion
 * cannot starve other requests, and it checks the abort signal before every token.
 */
import { scoredToken } from '../../local-model/logprobs.js';
import type { LocalRuntime } from '../../local-model/model-loader.js';
import type { RandomSource } from '../../local-model/random.js';
import type { LocalSamplingSettings } from '../../local-model/sampler.js';
import { LocalTokenGenerator } from '../../local-model/token-generator.js';
import type { FinishReason, StreamPart, TokenLogprob } from '../types.js';
import { LocalChoiceOutput } from './local-choice-output.js';

const TOKENS_BETWEEN_YIELDS = 64;

export interface LocalChoiceJob {
  runtime: LocalRuntime;
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
  random: RandomSource;
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
  const { choice } = job;
  // Parts of one compute slice (between event-loop yields) leave as one batch.
  let batch: StreamPart[] = [];
  if (job.echo && job.echo.text.length > 0) {
    batch.push(
      job.echo.logprobs
        ? { type: 'text-delta', choice, text: job.echo.text, logprobs: job.echo.logprobs }
        : { type: 'text-delta', choice, text: job.echo.text },
    );
  }
  const generator = new LocalTokenGenerator({
    runtime: job.runtime,
    sampling: job.sampling,
    history: job.history,
    random: job.random,
    alternatives: job.logprobs,
    score: job.score,
  });
  try {
    const output = new LocalChoiceOutput(choice, job.stop, job.logprobs !== null);
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
      const generated = generator.next();
      if (job.score) {
        result.logprobSum += generated.logprob;
        result.scoredTokens++;
      }
      if (generated.ended) {
        finishReason = 'stop';
        break;
      }
      result.completionTokens++;
      if (unitEntries) unitEntries.push(scoredToken(generated.tokenText, generated.logprob, generated.alternatives ?? {}));
      if (generated.text === null) continue;
      const part = output.push(generated.text, unitEntries);
      if (unitEntries) unitEntries = [];
      if (part) batch.push(part);
      if (output.stopped) {
        finishReason = 'stop';
        break;
      }
    }
    if (!output.stopped) {
      const held = generator.flush();
      if (held !== null) {
        const part = output.push(held, unitEntries);
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
    generator.release();
  }
}
