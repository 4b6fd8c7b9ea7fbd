import type { TokenLogprob } from '../types.js';
import type { OpenAILogprobs } from './openai-compatible-api.js';

/** The parallel arrays of the completions `logprobs` object, as one entry per token. */
export function mapOpenAICompatibleLogprobs(logprobs: OpenAILogprobs | null | undefined): TokenLogprob[] | undefined {
  const tokens = logprobs?.tokens;
  if (!tokens || tokens.length === 0) return undefined;
  return tokens.map((token, index) => ({
    token,
    logprob: logprobs.token_logprobs?.[index] ?? null,
    topLogprobs: logprobs.top_logprobs?.[index] ?? null,
  }));
}
