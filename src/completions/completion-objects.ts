/** The wire objects of the legacy completions API: the Completion, its stream chunks, and usage. */
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

/** The non-stream answer, and (with one choice, or none and the usage) each stream chunk. */
export interface Completion {
  id: string;
  object: 'text_completion';
  created: number;
  model: string;
  system_fingerprint: string | null;
  choices: CompletionChoice[];
  /** Always on the answer; on stream chunks only when the client asked for usage (null until the last). */
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
