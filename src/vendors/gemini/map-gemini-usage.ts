import type { Usage } from '../types.js';
import type { GeminiUsage } from './gemini-api.js';

/**
 * promptTokenCount already includes cached content; thoughts are billed as output, so they are
 * completion tokens and also reported as reasoning tokens.
 */
export function mapGeminiUsage(usage: GeminiUsage): Usage | null {
  // usageMetadata without counts (`{}`) reports nothing.
  if (usage.promptTokenCount == null && usage.candidatesTokenCount == null) return null;
  const thoughts = usage.thoughtsTokenCount ?? null;
  return {
    promptTokens: (usage.promptTokenCount ?? 0) + (usage.toolUsePromptTokenCount ?? 0),
    completionTokens: (usage.candidatesTokenCount ?? 0) + (thoughts ?? 0),
    cachedTokens: usage.cachedContentTokenCount ?? null,
    reasoningTokens: thoughts,
  };
}
