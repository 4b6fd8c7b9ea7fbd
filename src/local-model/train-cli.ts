/**
 * Trains the local model and writes it to the cache, so a build can pay the training cost once:
 * `node dist/src/local-model/train-cli.js [cache directory]`.
 */
import { defaultCacheDirectory, loadOrTrainLocalModel } from './model-store.js';

const cacheDir = process.argv[2] ?? defaultCacheDirectory();
const loaded = loadOrTrainLocalModel({ cacheDir });
const megabytes = (loaded.fileBytes / 1024 / 1024).toFixed(1);
const what = loaded.trained ? `trained in ${(loaded.trainingMs / 1000).toFixed(1)} s` : `already cached (loaded in ${loaded.loadMs.toFixed(0)} ms)`;
const data = loaded.data;
const entries = data.levels.map((level) => level.continuationTokens.length).join(' / ');
process.stdout.write(
  `local model ${what}: ${loaded.path} (${megabytes} MiB; vocabulary ${data.vocabulary.length}; ${data.order}-gram entries by context length ${entries})\n`,
);
