/**
 * The BPE rank tables of OpenAI's encodings, and gpt-tokenizer's encoder built over them.
 *
 * gpt-tokenizer ships each table as a JavaScript module holding one array literal of 100k–200k
 * entries. Compiling that module costs V8's parser tens of MiB that the process keeps (cl100k:
 * RSS +35 MiB, measured in a bare process). `npm run build` writes the same tables as JSON
 * (scripts/build-token-ranks.js) and they are read here with `JSON.parse`, which builds the
 * strings without a syntax tree (RSS +25 MiB for cl100k, the encoder's maps included). When the
 * JSON is missing (a build that skipped the script), the library's own module is loaded instead.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

export type EncodingName = 'cl100k_base' | 'o200k_base';

/** A rank entry: the token's text when it is valid UTF-8 on its own, its bytes otherwise. */
export type BpeRank = string | readonly number[];

/** Special-token text (`<|endoftext|>`) in a prompt is ordinary text to count, never an error. */
export interface BpeEncoding {
  encode(text: string): number[];
  decode(tokens: number[]): string;
}

const require = createRequire(import.meta.url);
/** dist/src/tokenizer/ → dist/token-ranks/ */
const ranksDirectory = new URL('../../token-ranks/', import.meta.url);

/** A table `npm run build` wrote for `name`: `json` (the rank table) or `bpe` (compact-bpe.ts). */
export function tokenTableFile(name: EncodingName, extension: 'json' | 'bpe'): URL {
  return new URL(`${name}.${extension}`, ranksDirectory);
}

export function loadBpeRanks(name: EncodingName): readonly BpeRank[] {
  const file = tokenTableFile(name, 'json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as BpeRank[];
  return (require(`gpt-tokenizer/cjs/bpeRanks/${name}`) as { default: readonly BpeRank[] }).default;
}

/** gpt-tokenizer's encoder for `name`, over `ranks` (the same array the caller may read too). */
export function createBpeEncoding(name: EncodingName, ranks: readonly BpeRank[]): BpeEncoding {
  const { GptEncoding } = require('gpt-tokenizer/cjs/GptEncoding') as {
    GptEncoding: { getEncodingApi(name: string, getRanks: () => readonly BpeRank[]): LibraryEncoding };
  };
  const library = GptEncoding.getEncodingApi(name, () => ranks);
  // The library's default refuses special-token text; one pair of empty sets makes it text.
  const noSpecial = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };
  return { encode: (text) => library.encode(text, noSpecial), decode: (tokens) => library.decode(tokens) };
}

interface LibraryEncoding {
  encode(text: string, options: { allowedSpecial: Set<string>; disallowedSpecial: Set<string> }): number[];
  decode(tokens: number[]): string;
}
