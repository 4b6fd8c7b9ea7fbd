/**
 * Prompt encoding for the local model with a one-entry memo: the pipeline counts a prompt's tokens
 * (context window, reservations) and `prepare` then needs the same ids, synchronously after, so
 * each prompt is tokenized once rather than twice. `<|endoftext|>` in the text is the special
 * token, as OpenAI reads it, so counting and generation agree on it.
 */
import { encodePromptText } from '../../tokenizer/tokenizer.js';

let lastText: string | null = null;
let lastTokens: number[] = [];

export function encodePrompt(text: string): number[] {
  if (text !== lastText) {
    lastTokens = encodePromptText(text);
    lastText = text;
  }
  return lastTokens;
}

export function countPromptTokens(text: string): number {
  return text.length === 0 ? 0 : encodePrompt(text).length;
}
