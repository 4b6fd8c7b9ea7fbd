/**
 * One choice (or best_of candidate) as stream parts: tokens from the engine, max_tokens and stop
 * sequences enforced, text deltas yielded as they become final. It checks the abort signal before
 * every token and yields to the event loop every 64, so one long completion cannot starve others.
 */
import { setImmediate } from 'node:timers/promises';
import { type LocalGenerationOptions, LocalTokenGenerator } from '../../local-model/token-generator.js';
import type { FinishReason, StreamPart, TokenLogprob } from '../types.js';
import { LocalChoiceOutput } from './local-choice-output.js';

const TOKENS_BETWEEN_YIELDS = 64;

export interface LocalChoiceJob extends LocalGenerationOptions {
  /** The echoed prompt delta, sent first; null without echo. */
  echo: { text: string; logprobs: TokenLogprob[] | null } | null;
  choice: number;
  maxTokens: number;
  stop: readonly string[];
  signal: AbortSignal;
}

/** What a choice cost and scored so far, kept up to date however the generation ends. */
export interface LocalChoiceResult {
  /** Tokens generated (what the compute cost); the end-of-text token is not counted. */
  completionTokens: number;
  /** Sum of the model logprobs of the generated tokens, end-of-text included (only when `score`). */
  logprobSum: number;
  scoredTokens: number;
  aborted: boolean;
}

export async function* generateChoice(job: LocalChoiceJob, result: LocalChoiceResult): AsyncGenerator<StreamPart[]> {
  const { choice, echo } = job;
  // Parts of one compute slice (between event-loop yields) leave as one batch.
  let batch: StreamPart[] = [];
  const send = (part: StreamPart | null): void => {
    if (part) batch.push(part);
  };
  if (echo && echo.text.length > 0)
    send(echo.logprobs ? { type: 'text-delta', choice, text: echo.text, logprobs: echo.logprobs } : { type: 'text-delta', choice, text: echo.text });
  const generator = new LocalTokenGenerator(job);
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
        await setImmediate();
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
      if (generated.entry) unitEntries?.push(generated.entry);
      if (generated.text === null) continue;
      send(output.push(generated.text, unitEntries));
      if (unitEntries) unitEntries = [];
      if (output.stopped) break;
    }
    if (!output.stopped) {
      const held = generator.flush();
      if (held !== null) send(output.push(held, unitEntries));
      if (!output.stopped) send(output.finish());
    }
    batch.push({ type: 'finish', choice, finishReason: output.stopped ? 'stop' : finishReason });
    yield batch;
  } finally {
    generator.release();
  }
}
