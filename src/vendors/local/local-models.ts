/**
 * The one model the local vendor offers: `local/tollgate-small`, a 4-gram Kneser-Ney model over
 * cl100k_base trained on the State of the Union addresses since 1900: no network, no key, and token
 * counts that are exact because its vocabulary is the tokenizer's.
 */
import { FREE } from '../../config/prices.js';
import { encodePromptText } from '../../tokenizer/tokenizer.js';
import type { ModelInfo } from '../types.js';

export const LOCAL_VENDOR = 'local';
const MODEL_NAME = 'tollgate-small';

let lastText: string | null = null;
let lastTokens: number[] = [];

/** A prompt's token ids, remembered for one prompt: the pipeline counts a prompt, and `prepare` then needs its ids. */
export function encodePrompt(text: string): number[] {
  if (text !== lastText) {
    lastTokens = encodePromptText(text);
    lastText = text;
  }
  return lastTokens;
}

export function localModels(): ModelInfo[] {
  return [
    {
      id: `${LOCAL_VENDOR}/${MODEL_NAME}`,
      vendor: LOCAL_VENDOR,
      name: MODEL_NAME,
      // An n-gram has no real limit; this bounds prompt + completion as a transformer's window would.
      contextWindow: 4096,
      // A conversation reaches it as its transcript, which it continues.
      capabilities: { logprobs: true, nativeCompletions: true, chat: true },
      countTokens: (text) => (text.length === 0 ? 0 : encodePrompt(text).length),
      exactTokenizer: true,
      // It runs in the gateway's own process: nothing to pay a vendor for.
      price: FREE,
    },
  ];
}
