/**
 * Trains the local model and writes it to the cache, so a build can pay the training cost once:
 * `node dist/src/local-model/train-cli.js [cache directory]`.
 */
import { statSync } from 'node:fs';
import { defaultCacheDirectory, loadOrTrainLocalModel } from './model-store.js';

const { data, path, trained, trainingMs, loadMs } = loadOrTrainLocalModel({ cacheDir: process.argv[2] ?? defaultCacheDirectory() });
const megabytes = (statSync(path).size / 1024 / 1024).toFixed(1);
const what = trained ? `trained in ${(trainingMs / 1000).toFixed(1)} s` : `already cached (loaded in ${loadMs.toFixed(0)} ms)`;
const entries = data.levels.map((level) => level.continuationTokens.length).join(' / ');
process.stdout.write(
  `local model ${what}: ${path} (${megabytes} MiB; vocabulary ${data.vocabulary.length}; ${data.order}-gram entries by context length ${entries})\n`,
);
