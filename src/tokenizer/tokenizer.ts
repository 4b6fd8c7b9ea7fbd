/**
 * The gateway's tokenizer: OpenAI's cl100k_base BPE. The local model uses it as its vocabulary (so
 * its counts are exact); other vendors use it for estimates when they report no usage.
 *
 * Encoding and counting go through the compact table (compact-bpe.ts, ~2 MiB); decoding and the
 * local model's token texts read the rank table and gpt-tokenizer's encoder over it (~15 MiB), which
 * only the local model needs. Both are loaded on first use, not at import: a gateway that only
 * proxies vendors that report their own usage (with prompts short enough for the byte bound to
 * settle the context check) never tokenizes anything. They load synchronously because the callers
 * are synchronous.
 */
import { createBpeEncoding, loadBpeRanks, type BpeEncoding, type BpeRank } from './bpe-ranks.js';
import { compactBpe } from './compact-bpe.js';

export const TOKENIZER_NAME = 'cl100k_base';

/** A cl100k rank entry: the token's text when it is valid UTF-8 on its own, its bytes otherwise. */
export type Cl100kRank = BpeRank;

let encoding: BpeEncoding | null = null;
let ranks: readonly Cl100kRank[] | null = null;

function cl100k(): BpeEncoding {
  if (encoding === null) encoding = createBpeEncoding('cl100k_base', cl100kRanks());
  return encoding;
}

/** cl100k_base ranks by token id (the table the encoding is built from). */
export function cl100kRanks(): readonly Cl100kRank[] {
  if (ranks === null) ranks = loadBpeRanks('cl100k_base');
  return ranks;
}

export function encodeText(text: string): number[] {
  return compactBpe('cl100k_base').encode(text);
}

/** cl100k_base's end-of-text special token: separates documents, and is OpenAI's default prompt. */
export const END_OF_TEXT_TOKEN = 100257;
/** The text of END_OF_TEXT_TOKEN. */
export const END_OF_TEXT = '<|endoftext|>';

/**
 * A prompt's token ids as OpenAI reads prompt text: ordinary text, except that every
 * `<|endoftext|>` in it is the special token, one token, rather than the seven of its spelling.
 */
export function encodePromptText(text: string): number[] {
  if (!text.includes(END_OF_TEXT)) return encodeText(text);
  const tokens: number[] = [];
  text.split(END_OF_TEXT).forEach((piece, index) => {
    if (index > 0) tokens.push(END_OF_TEXT_TOKEN);
    if (piece.length > 0) tokens.push(...encodeText(piece));
  });
  return tokens;
}

export function decodeTokens(tokens: readonly number[]): string {
  return cl100k().decode(tokens as number[]);
}

/**
 * Token count of `text`. Cheap bound first: a cl100k token is at least one UTF-8 byte, so when
 * the caller only needs an upper bound it can use `Buffer.byteLength` instead.
 */
export function countTokens(text: string): number {
  // Empty text (an empty prompt, a stream cancelled before any text) never loads the table.
  if (text.length === 0) return 0;
  return compactBpe('cl100k_base').count(text);
}
