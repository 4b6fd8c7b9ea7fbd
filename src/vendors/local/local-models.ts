/**
 * The models the local vendor offers. There is one: `local/tollgate-small`, a 4-gram interpolated
 * Kneser-Ney language model over cl100k_base tokens, trained on the State of the Union addresses
 * since 1900. It needs no network and no key, so the gateway always has a working model (tests,
 * demos, benchmarks), and its token counts are exact because its vocabulary is the tokenizer's.
 */
import { countPromptTokens } from './local-prompt-tokens.js';
import type { ModelInfo } from '../types.js';
import { LOCAL_VENDOR } from './local-request-check.js';

export const LOCAL_MODEL_NAME = 'tollgate-small';
/** An n-gram has no real limit; this bounds prompt + completion like a transformer's window would. */
export const LOCAL_CONTEXT_WINDOW = 4096;

export function localModels(): ModelInfo[] {
  return [
    {
      id: `${LOCAL_VENDOR}/${LOCAL_MODEL_NAME}`,
      vendor: LOCAL_VENDOR,
      name: LOCAL_MODEL_NAME,
      contextWindow: LOCAL_CONTEXT_WINDOW,
      capabilities: { logprobs: true, nativeCompletions: true },
      countTokens: countPromptTokens,
      exactTokenizer: true,
    },
  ];
}
