/** The wire objects of the legacy completions API: the Completion and its stream chunks. */
import type { FinishReason, Usage } from '../vendors/types.js';

export interface ChoiceLogprobs {
  tokens: string[];
  token_logprobs: (number | null)[];
  top_logprobs: (Record<string, number> | null)[];
  text_offset: number[];
}

export interface CompletionChoice {
  text: string;
  index: number;
  logprobs: ChoiceLogprobs | null;
  finish_reason: FinishReason | null;
}

export interface CompletionUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  completion_tokens_details: {
    accepted_prediction_tokens: number;
    audio_tokens: number;
    reasoning_tokens: number;
    rejected_prediction_tokens: number;
  };
  prompt_tokens_details: { audio_tokens: number; cached_tokens: number };
}

export interface Completion {
  id: string;
  object: 'text_completion';
  created: number;
  model: string;
  system_fingerprint: string | null;
  choices: CompletionChoice[];
  usage?: CompletionUsage | null;
}

export function toWireUsage(usage: Usage): CompletionUsage {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    completion_tokens_details: {
      accepted_prediction_tokens: usage.acceptedPredictionTokens ?? 0,
      audio_tokens: usage.audioCompletionTokens ?? 0,
      reasoning_tokens: usage.reasoningTokens ?? 0,
      rejected_prediction_tokens: usage.rejectedPredictionTokens ?? 0,
    },
    prompt_tokens_details: { audio_tokens: usage.audioPromptTokens ?? 0, cached_tokens: usage.cachedTokens ?? 0 },
  };
}

/**
 * `JSON.stringify(usage)`, written field by field: the stream's closing usage chunk. Its shape is
 * fixed and every value is a number, so a template gives the same text without the serialiser's
 * walk over two nested objects (0.8% of a stream's CPU in a profile). A value JSON cannot write as
 * a number (not finite) falls back to the serialiser, which writes `null`.
 */
export function usageJson(usage: CompletionUsage): string {
  const completion = usage.completion_tokens_details;
  const prompt = usage.prompt_tokens_details;
  // The sum is finite only when every value is (it can also overflow, which only costs the fallback).
  const sum = usage.prompt_tokens + usage.completion_tokens + usage.total_tokens + completion.accepted_prediction_tokens + completion.audio_tokens + completion.reasoning_tokens + completion.rejected_prediction_tokens + prompt.audio_tokens + prompt.cached_tokens;
  if (!Number.isFinite(sum)) return JSON.stringify(usage);
  return `{"prompt_tokens":${usage.prompt_tokens},"completion_tokens":${usage.completion_tokens},"total_tokens":${usage.total_tokens},"completion_tokens_details":{"accepted_prediction_tokens":${completion.accepted_prediction_tokens},"audio_tokens":${completion.audio_tokens},"reasoning_tokens":${completion.reasoning_tokens},"rejected_prediction_tokens":${completion.rejected_prediction_tokens}},"prompt_tokens_details":{"audio_tokens":${prompt.audio_tokens},"cached_tokens":${prompt.cached_tokens}}}`;
}
