import type { Usage } from '../types.js';
import type { OpenAIUsage } from './openai-compatible-api.js';

/** The vendor's counts, or null for a usage object without them (`{}`), which reports nothing. */
export function mapOpenAICompatibleUsage(usage: OpenAIUsage | null | undefined): Usage | null {
  if (usage == null || (usage.prompt_tokens == null && usage.completion_tokens == null)) return null;
  return {
    promptTokens: usage.prompt_tokens ?? 0,
    completionTokens: usage.completion_tokens ?? 0,
    cachedTokens: usage.prompt_tokens_details?.cached_tokens ?? usage.prompt_cache_hit_tokens ?? null,
    reasoningTokens: usage.completion_tokens_details?.reasoning_tokens ?? null,
    audioPromptTokens: usage.prompt_tokens_details?.audio_tokens ?? null,
    audioCompletionTokens: usage.completion_tokens_details?.audio_tokens ?? null,
    acceptedPredictionTokens: usage.completion_tokens_details?.accepted_prediction_tokens ?? null,
    rejectedPredictionTokens: usage.completion_tokens_details?.rejected_prediction_tokens ?? null,
  };
}
