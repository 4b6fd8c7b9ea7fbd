/**
 * The gateway's tokenizer: OpenAI's cl100k_base BPE through gpt-tokenizer. The local model uses it
 * as its vocabulary (so its counts are exact); other vendors use it for estimates when they report
 * no usage.
 */
import { decode, encode } from 'gpt-tokenizer/encoding/cl100k_base';

export const TOKENIZER_NAME = 'cl100k_base';

export function encodeText(text: string): number[] {
  return encode(text, { allowedSpecial: new Set() , disallowedSpecial: new Set() });
}

export function decodeTokens(tokens: readonly number[]): string {
  return decode(tokens as number[]);
}

/**
 * Token count of `text`. Cheap bound first: a cl100k token is at least one UTF-8 byte, so when
 * the caller only needs an upper bound it can use `Buffer.byteLength` instead.
 */
export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  return encodeText(text).length;
}
