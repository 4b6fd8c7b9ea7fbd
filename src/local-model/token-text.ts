/**
 * What each token looks like to a client. A token whose bytes are valid UTF-8 on their own is its
 * text; a byte fragment (part of a character) is spelled as OpenAI spells it in logprobs,
 * `bytes:\xe2\x80`, and its bytes wait for the rest of the character before any text is released.
 */
import { cl100kRanks, SPECIAL_TOKENS } from '../tokenizer/tokenizer.js';

/** Ids of cl100k_base's special tokens, ascending. */
export const SPECIAL_TOKEN_IDS: readonly number[] = [...SPECIAL_TOKENS.keys()];

/** Largest id of an ordinary (non-special) cl100k token. */
export const LAST_ORDINARY_TOKEN = 100255;

/** Any cl100k id, ordinary or special. */
export function isKnownToken(id: number): boolean {
  return (Number.isInteger(id) && id >= 0 && id <= LAST_ORDINARY_TOKEN) || SPECIAL_TOKENS.has(id);
}

/** The logprobs spelling of a cl100k token: its text, `bytes:\xNN…` for a fragment, or the special token's name. */
export function tokenString(id: number): string {
  const special = SPECIAL_TOKENS.get(id);
  if (special !== undefined) return special;
  const entry = cl100kRanks()[id];
  if (entry === undefined) return '';
  return typeof entry === 'string' ? entry : `bytes:${entry.map((byte) => `\\x${byte.toString(16).padStart(2, '0')}`).join('')}`;
}

/**
 * Token strings and bytes of the model's vocabulary, precomputed. The bytes sit in one buffer with
 * an offset table: a Uint8Array per token cost ~190 bytes each, 4.2 MiB to hold ~150 KiB of bytes.
 */
export class LocalTokenTexts {
  /** Logprobs spelling per vocabulary index. */
  readonly strings: string[];
  /** Whether the token is text on its own (not a byte fragment). */
  readonly complete: Uint8Array;
  /** Vocabulary index i's bytes are byteData[byteOffsets[i] … byteOffsets[i + 1]); special tokens have none. */
  readonly byteData: Uint8Array;
  readonly byteOffsets: Uint32Array;

  constructor(vocabulary: Int32Array) {
    const ranks = cl100kRanks();
    this.strings = Array.from(vocabulary, tokenString);
    this.complete = new Uint8Array(vocabulary.length);
    this.byteOffsets = new Uint32Array(vocabulary.length + 1);
    const bytes = Array.from(vocabulary, (id, index) => {
      const entry = ranks[id];
      this.complete[index] = typeof entry === 'string' || SPECIAL_TOKENS.has(id) ? 1 : 0;
      if (SPECIAL_TOKENS.has(id) || entry === undefined) return Buffer.alloc(0);
      return typeof entry === 'string' ? Buffer.from(entry, 'utf8') : Buffer.from(entry);
    });
    this.byteData = Buffer.concat(bytes);
    bytes.forEach((token, index) => {
      this.byteOffsets[index + 1] = this.byteOffsets[index] + token.length;
    });
  }
}
