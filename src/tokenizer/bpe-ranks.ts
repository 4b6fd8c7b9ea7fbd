/**
 * The BPE rank tables of OpenAI's encodings. gpt-tokenizer ships each as a JavaScript module of one
 * 100k–200k entry array literal, whose syntax tree costs V8 tens of MiB that the process keeps
 * (cl100k: RSS +35 MiB). `npm run build` writes the same tables as JSON (scripts/build-token-ranks.js),
 * and `JSON.parse` builds the strings without one (+25 MiB). Without the JSON, the module is loaded.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

export type EncodingName = 'cl100k_base' | 'o200k_base';

/** A rank entry: the token's text when it is valid UTF-8 on its own, its bytes otherwise. */
export type BpeRank = string | readonly number[];

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
