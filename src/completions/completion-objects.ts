/** The wire objects of the legacy completions API, typed from their schemas: the Completion, its stream chunks, and usage. */
import type { z } from 'zod';
import type { Usage } from '../vendors/types.js';
import type { choiceLogprobsSchema, completionChunkSchema, completionUsageSchema } from './completion-response-schema.js';

export type ChoiceLogprobs = z.infer<typeof choiceLogprobsSchema>;

export type CompletionUsage = z.infer<typeof completionUsageSchema>;

/** The non-stream answer, and (with one choice, or none and the usage) each stream chunk; `usage` is on stream chunks only when the client asked for it. */
export type Completion = z.infer<typeof completionChunkSchema>;

export type CompletionChoice = Completion['choices'][number];

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
