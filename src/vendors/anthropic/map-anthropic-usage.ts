import type { Usage } from '../types.js';
import type { AnthropicUsage } from './anthropic-api.js';

/**
 * Anthropic's input_tokens excludes cache reads and cache writes; the completions contract counts
 * every prompt token in prompt_tokens, with the cache hits broken out as cached_tokens.
 */
export function mapAnthropicUsage(usage: AnthropicUsage | null | undefined): Usage | null {
  // A usage object without counts (`{}`) reports nothing.
  if (usage == null || (usage.input_tokens == null && usage.output_tokens == null)) return null;
  const cacheRead = usage.cache_read_input_tokens ?? null;
  const cacheWrite = usage.cache_creation_input_tokens ?? 0;
  return {
    promptTokens: (usage.input_tokens ?? 0) + (cacheRead ?? 0) + cacheWrite,
    completionTokens: usage.output_tokens ?? 0,
    cachedTokens: cacheRead,
    reasoningTokens: null,
  };
}

/** message_delta carries cumulative counts; later values win, absent ones keep the earlier report. */
export function mergeAnthropicUsage(earlier: AnthropicUsage, later: AnthropicUsage): AnthropicUsage {
  return {
    input_tokens: later.input_tokens ?? earlier.input_tokens,
    output_tokens: later.output_tokens ?? earlier.output_tokens,
    cache_creation_input_tokens: later.cache_creation_input_tokens ?? earlier.cache_creation_input_tokens,
    cache_read_input_tokens: later.cache_read_input_tokens ?? earlier.cache_read_input_tokens,
  };
}
