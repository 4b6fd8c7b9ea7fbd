/**
 * The gateway's tokenizer: OpenAI's cl100k_base BPE, the local model's vocabulary (so its counts are
 * exact) and the estimate for vendors that report no usage. Encoding and counting use the compact
 * table (compact-bpe.ts, ~2 MiB); decoding and the local model's texts read the rank table (~15 MiB).
 * Both load synchronously on first use, never at import: a gateway that only proxies vendors that
 * report usage never tokenizes anything.
 */
import { type BpeRank, loadBpeRanks } from './bpe-ranks.js';
import { compactBpe } from './compact-bpe.js';

export const TOKENIZER_NAME = 'cl100k_base';
/** cl100k_base's end-of-text special token: separates documents, and is OpenAI's default prompt. */
export const END_OF_TEXT_TOKEN = 100257;
export const END_OF_TEXT = '<|endoftext|>';

/** cl100k_base's special tokens by id. */
export const SPECIAL_TOKENS: ReadonlyMap<number, string> = new Map([
  [END_OF_TEXT_TOKEN, END_OF_TEXT],
  [100258, '<|fim_prefix|>'],
  [100259, '<|fim_middle|>'],
  [100260, '<|fim_suffix|>'],
  [100276, '<|endofprompt|>'],
]);

let ranks: readonly BpeRank[] | null = null;

/** cl100k_base ranks by token id. */
export function cl100kRanks(): readonly BpeRank[] {
  ranks ??= loadBpeRanks('cl100k_base');
  return ranks;
}

export function encodeText(text: string): number[] {
  return compactBpe('cl100k_base').encode(text);
}

/** A prompt's token ids as OpenAI reads prompt text: every `<|endoftext|>` in it is the one special token. */
export function encodePromptText(text: string): number[] {
  if (!text.includes(END_OF_TEXT)) return encodeText(text);
  const pieces = text.split(END_OF_TEXT).map((piece) => (piece.length > 0 ? encodeText(piece) : []));
  return pieces.flatMap((tokens, index) => (index === 0 ? tokens : [END_OF_TEXT_TOKEN, ...tokens]));
}

/**
 * The text of cl100k ids: their bytes joined, then read as UTF-8 once, so a character split across
 * tokens comes out whole and one left unfinished is U+FFFD (nothing carries over to another call).
 */
export function decodeTokens(tokens: readonly number[]): string {
  const table = cl100kRanks();
  const parts = tokens.map((token) => {
    const rank = SPECIAL_TOKENS.get(token) ?? table[token];
    if (rank === undefined) throw new RangeError(`Token ${token} is not in cl100k_base.`);
    return typeof rank === 'string' ? Buffer.from(rank, 'utf8') : Buffer.from(rank);
  });
  return Buffer.concat(parts).toString('utf8');
}

/** Token count of `text` (a cl100k token is at least one UTF-8 byte: `Buffer.byteLength` bounds it cheaply). */
export function countTokens(text: string): number {
  // Empty text (an empty prompt, a stream cancelled before any text) never loads the table.
  return text.length === 0 ? 0 : compactBpe('cl100k_base').count(text);
}
