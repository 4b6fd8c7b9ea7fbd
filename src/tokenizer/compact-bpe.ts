/**
 * Token counts for metering over a compact copy of a BPE rank table. gpt-tokenizer keeps its ranks
 * as 100k–200k strings in a `Map` plus a merge cache (cl100k: ~12 MiB of peak RSS under load); here
 * a table is one file of token bytes and offsets (scripts/build-token-ranks.js), with an
 * open-addressing hash over them: ~2 MiB of typed arrays. Text is split with the library's pattern,
 * each piece looked up whole, then merged pair by pair, lowest rank first, as tiktoken does;
 * special-token text is ordinary text. `test/compact-bpe.test.ts` holds the tokens to the library's.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type BpeRank, type EncodingName, loadBpeRanks, tokenTableFile } from './bpe-ranks.js';

const require = createRequire(import.meta.url);
/** Marks a hash slot as empty; a full slot holds its rank + 1. */
const EMPTY = 0;
/** A pair that is no token: ranks are below 2^31. */
const NO_RANK = 0x7fffffff;

/** The table file: u32 count, u32 offsets[count + 1], then the tokens' bytes back to back (little-endian). */
export function writeCompactTable(ranks: readonly (BpeRank | undefined)[]): Buffer {
  const tokens = ranks.map((rank) => (rank === undefined ? Buffer.alloc(0) : typeof rank === 'string' ? Buffer.from(rank, 'utf8') : Buffer.from(rank)));
  const header = Buffer.alloc(4 * (tokens.length + 2));
  header.writeUInt32LE(tokens.length, 0);
  let offset = 0;
  tokens.forEach((token, rank) => {
    header.writeUInt32LE(offset, 4 * (rank + 1));
    offset += token.length;
  });
  header.writeUInt32LE(offset, 4 * (tokens.length + 1));
  return Buffer.concat([header, ...tokens]);
}

const cache = new Map<EncodingName, CompactEncoder>();

/** The encoding's compact encoder, loaded on first use (from the rank table when the build wrote no table file). */
export function compactBpe(name: EncodingName): CompactEncoder {
  let bpe = cache.get(name);
  if (!bpe) {
    const file = tokenTableFile(name, 'bpe');
    const table = existsSync(file) ? readFileSync(file) : writeCompactTable(loadBpeRanks(name));
    bpe = new CompactEncoder(table, splitPattern(name));
    cache.set(name, bpe);
  }
  return bpe;
}

function splitPattern(name: EncodingName): RegExp {
  const patterns = require('gpt-tokenizer/cjs/encodingParams/constants') as { CL100K_TOKEN_SPLIT_REGEX: RegExp; O200K_TOKEN_SPLIT_REGEX: RegExp };
  return name === 'cl100k_base' ? patterns.CL100K_TOKEN_SPLIT_REGEX : patterns.O200K_TOKEN_SPLIT_REGEX;
}

/** FNV-1a over bytes[start, end). */
function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let index = start; index < end; index++) hash = Math.imul(hash ^ bytes[index], 0x01000193);
  return hash >>> 0;
}

export class CompactEncoder {
  private readonly offsets: Uint32Array;
  private readonly bytes: Uint8Array;
  private readonly slots: Int32Array;
  private readonly mask: number;
  private readonly pattern: RegExp;
  private readonly utf8 = new TextEncoder();
  /** The current piece's UTF-8 bytes (grown as needed; a UTF-16 unit is at most 3 bytes). */
  private scratch = new Uint8Array(256);

  constructor(file: Buffer, pattern: RegExp) {
    // The views need 4-byte alignment; a file read whole has its own buffer, but copy if not.
    const data = file.byteOffset % 4 === 0 ? file : Buffer.from(file);
    const count = data.readUInt32LE(0);
    this.offsets = new Uint32Array(data.buffer, data.byteOffset + 4, count + 1);
    const bytesStart = 4 * (count + 2);
    this.bytes = new Uint8Array(data.buffer, data.byteOffset + bytesStart, data.length - bytesStart);
    if (this.offsets[count] !== this.bytes.length) throw new Error('the compact BPE table is truncated or corrupt');
    let size = 1;
    while (size < count * 2) size *= 2;
    this.slots = new Int32Array(size);
    this.mask = size - 1;
    for (let rank = 0; rank < count; rank++) {
      const start = this.offsets[rank];
      const end = this.offsets[rank + 1];
      if (start === end) continue;
      let slot = hashBytes(this.bytes, start, end) & this.mask;
      while (this.slots[slot] !== EMPTY) slot = (slot + 1) & this.mask;
      this.slots[slot] = rank + 1;
    }
    this.pattern = pattern;
  }

  encode(text: string): number[] {
    const tokens: number[] = [];
    this.each(text, (rank) => tokens.push(rank));
    return tokens;
  }

  count(text: string): number {
    let count = 0;
    this.each(text, () => count++);
    return count;
  }

  private each(text: string, emit: (rank: number) => void): void {
    if (text.length === 0) return;
    for (const [piece] of text.matchAll(this.pattern)) {
      if (this.scratch.length < piece.length * 3) this.scratch = new Uint8Array(piece.length * 3);
      const length = this.utf8.encodeInto(piece, this.scratch).written;
      const whole = this.rankOf(this.scratch, 0, length);
      if (whole !== NO_RANK) emit(whole);
      else this.merge(this.scratch, length, emit);
    }
  }

  /** The rank of the token whose bytes are bytes[start, end), or NO_RANK. */
  private rankOf(bytes: Uint8Array, start: number, end: number): number {
    const length = end - start;
    let slot = hashBytes(bytes, start, end) & this.mask;
    for (;;) {
      const entry = this.slots[slot];
      if (entry === EMPTY) return NO_RANK;
      const rank = entry - 1;
      const tokenStart = this.offsets[rank];
      if (this.offsets[rank + 1] - tokenStart === length) {
        let index = 0;
        while (index < length && this.bytes[tokenStart + index] === bytes[start + index]) index++;
        if (index === length) return rank;
      }
      slot = (slot + 1) & this.mask;
    }
  }

  /** Byte-pair merge of one piece: from single bytes, join the adjacent pair of lowest rank (the first on a tie) while one is a token. */
  private merge(piece: Uint8Array, length: number, emit: (rank: number) => void): void {
    // starts[i] is where part i begins; ranks[i] the rank of parts i and i+1 joined.
    const starts: number[] = [];
    const ranks: number[] = [];
    for (let index = 0; index <= length; index++) {
      starts.push(index);
      ranks.push(index < length - 1 ? this.rankOf(piece, index, index + 2) : NO_RANK);
    }
    const pairRank = (index: number) => (index + 2 < starts.length ? this.rankOf(piece, starts[index], starts[index + 2]) : NO_RANK);
    while (starts.length > 1) {
      let lowest = NO_RANK;
      let at = -1;
      for (let index = 0; index < ranks.length - 1; index++) {
        if (ranks[index] < lowest) {
          lowest = ranks[index];
          at = index;
        }
      }
      if (at < 0) break;
      starts.splice(at + 1, 1);
      ranks.splice(at, 1);
      ranks[at] = pairRank(at);
      if (at > 0) ranks[at - 1] = pairRank(at - 1);
    }
    for (let index = 0; index < starts.length - 1; index++) {
      const rank = this.rankOf(piece, starts[index], starts[index + 1]);
      if (rank === NO_RANK) throw new Error('a byte has no token in this BPE table');
      emit(rank);
    }
  }
}
