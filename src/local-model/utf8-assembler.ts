/**
 * Holds byte-fragment tokens back until they form whole UTF-8 characters, so a text delta never
 * carries half a character; a run that can never complete is released after a few tokens, with
 * replacement characters.
 */
import type { LocalTokenTexts } from './token-text.js';

/** Longest UTF-8 sequence is 4 bytes, so after 4 fragment tokens waiting cannot help. */
const MAXIMUM_PENDING_TOKENS = 4;
const decoder = new TextDecoder('utf-8');

export class LocalUtf8Assembler {
  private pending: number[] = [];
  private pendingTokens = 0;

  constructor(private readonly texts: LocalTokenTexts) {}

  /** Adds token `token` of `texts` (the vocabulary's by default); returns the text it completes, or null while a character is incomplete. */
  push(token: number, texts: LocalTokenTexts = this.texts): string | null {
    if (this.pendingTokens === 0 && texts.complete[token]) return texts.strings[token];
    const { byteData, byteOffsets } = texts;
    for (let index = byteOffsets[token]; index < byteOffsets[token + 1]; index++) this.pending.push(byteData[index]);
    this.pendingTokens++;
    if (endsIncomplete(this.pending) && this.pendingTokens < MAXIMUM_PENDING_TOKENS) return null;
    return this.flush();
  }

  /** Releases whatever is held (at the end of generation); null when nothing is. */
  flush(): string | null {
    if (this.pendingTokens === 0) return null;
    const text = decoder.decode(Uint8Array.from(this.pending));
    this.pending = [];
    this.pendingTokens = 0;
    return text;
  }
}

/** Whether the bytes end inside a multi-byte character that more bytes could still complete. */
function endsIncomplete(bytes: readonly number[]): boolean {
  for (let back = 1; back <= 4 && back <= bytes.length; back++) {
    const byte = bytes[bytes.length - back];
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return back < needed;
  }
  return false;
}
