/**
 * What each token looks like to a client. A token whose bytes are valid UTF-8 on their own is its
 * text; a token that is only part of a character (a byte fragment) is spelled the way OpenAI
 * spells it in logprobs, `bytes:\xe2\x80`, and its bytes wait for the rest of the character
 * before any text is released.
 */
import cl100kRanks from 'gpt-tokenizer/bpeRanks/cl100k_base';
import { END_OF_TEXT_TOKEN } from './local-corpus.js';

const SPECIAL_TOKENS = new Map<number, string>([
  [END_OF_TEXT_TOKEN, '<|endoftext|>'],
  [100258, '<|fim_prefix|>'],
  [100259, '<|fim_middle|>'],
  [100260, '<|fim_suffix|>'],
  [100276, '<|endofprompt|>'],
]);

/** Largest id of an ordinary (non-special) cl100k token. */
export const LAST_ORDINARY_TOKEN = 100255;

export function isOrdinaryToken(id: number): boolean {
  return Number.isInteger(id) && id >= 0 && id <= LAST_ORDINARY_TOKEN;
}

/** Any cl100k id, ordinary or special. */
export function isKnownToken(id: number): boolean {
  return isOrdinaryToken(id) || SPECIAL_TOKENS.has(id);
}

const encoder = new TextEncoder();

/** The raw bytes of an ordinary cl100k token. */
export function tokenBytes(id: number): Uint8Array {
  const entry = (cl100kRanks as ReadonlyArray<string | readonly number[]>)[id];
  if (entry === undefined) return new Uint8Array(0);
  return typeof entry === 'string' ? encoder.encode(entry) : Uint8Array.from(entry);
}

/** The logprobs spelling of a cl100k token: its text, `bytes:\xNN…` for a fragment, or the special token's name. */
export function tokenString(id: number): string {
  const special = SPECIAL_TOKENS.get(id);
  if (special !== undefined) return special;
  const entry = (cl100kRanks as ReadonlyArray<string | readonly number[]>)[id];
  if (entry === undefined) return '';
  return typeof entry === 'string' ? entry : spellBytes(entry);
}

export function spellBytes(bytes: ArrayLike<number>): string {
  let spelled = 'bytes:';
  for (let index = 0; index < bytes.length; index++) spelled += `\\x${bytes[index].toString(16).padStart(2, '0')}`;
  return spelled;
}

/** Token strings of the model's vocabulary, precomputed so a step only indexes an array. */
export class LocalTokenTexts {
  /** Logprobs spelling per vocabulary index. */
  readonly strings: string[];
  /** Whether the token is text on its own (not a byte fragment). */
  readonly complete: Uint8Array;
  /** Bytes per vocabulary index (used only for fragments). */
  readonly bytes: Uint8Array[];

  constructor(vocabulary: Int32Array) {
    this.strings = new Array<string>(vocabulary.length);
    this.complete = new Uint8Array(vocabulary.length);
    this.bytes = new Array<Uint8Array>(vocabulary.length);
    vocabulary.forEach((id, index) => {
      this.strings[index] = tokenString(id);
      const entry = (cl100kRanks as ReadonlyArray<string | readonly number[]>)[id];
      this.complete[index] = typeof entry === 'string' || SPECIAL_TOKENS.has(id) ? 1 : 0;
      this.bytes[index] = SPECIAL_TOKENS.has(id) ? new Uint8Array(0) : tokenBytes(id);
    });
  }
}
