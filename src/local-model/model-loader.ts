/**
 * The local model, loaded on first use: it holds ~30 MiB (the file's tables and the per-node weights
 * derived from them) plus the cl100k tables its texts are spelled from (~15 MiB), which a gateway
 * that only proxies other vendors never needs. At start the loader only checks the file's header;
 * a missing or stale cache is trained then, in a child process (train-cli.ts), because the heap
 * training grows stayed in the serving process (~110 MiB of RSS). If the child cannot run, the
 * model is trained and kept here. A file that cannot be read later is a 503 the client may retry
 * (the path stays in the log), and the read is retried at most once per RETRY_MS.
 */
import { spawnSync } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VendorError } from '../errors/vendor-error.js';
import { MAX_OUTSIDE_TOKENS } from './logit-bias.js';
import {
  isLocalModelCached,
  loadCachedLocalModel,
  loadOrTrainLocalModel,
  locateLocalModel,
  type LoadedLocalModel,
  type LocalModelLocation,
} from './model-store.js';
import { LocalNgramModel } from './ngram-model.js';
import { LocalTokenTexts } from './token-text.js';
import { LocalWorkspacePool } from './workspace.js';

const RETRY_MS = 5_000;

/** What generation reads: the model, its token texts, and workspaces (sized to the vocabulary and the ids outside it that logit_bias lifts). */
export interface LocalRuntime {
  model: LocalNgramModel;
  texts: LocalTokenTexts;
  pool: LocalWorkspacePool;
}

/** The log calls the loader makes (a pino logger fits), so the engine needs no logging module of its own. */
interface LocalModelLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export class LocalModelLoader {
  private readonly location: LocalModelLocation;
  private runtime: LocalRuntime | null = null;
  private failedAt = Number.NEGATIVE_INFINITY;

  /** `vendor` names the model's vendor in errors; `cacheDir` holds the cached model (default `<repo root>/.cache/local-model`). */
  constructor(private readonly options: { logger: LocalModelLog; vendor: string; cacheDir?: string }) {
    this.location = locateLocalModel({ cacheDir: options.cacheDir });
    if (isLocalModelCached(this.location)) {
      options.logger.info({ path: this.location.path }, 'local model cached (loads on first use)');
      return;
    }
    const start = performance.now();
    const failure = trainInChildProcess(this.location);
    const trainingMs = Math.round(performance.now() - start);
    if (failure === null && isLocalModelCached(this.location)) {
      options.logger.info({ path: this.location.path, trainingMs }, 'local model trained in a child process and cached (loads on first use)');
      return;
    }
    options.logger.warn({ reason: failure }, 'local model could not be trained in a child process; training it here');
    const loaded = loadOrTrainLocalModel(this.location);
    this.runtime = this.build(loaded, loaded.trained ? 'local model trained and cached' : 'local model loaded from cache');
  }

  get loaded(): boolean {
    return this.runtime !== null;
  }

  /** The runtime, loaded on the first call. Throws a VendorError (503) when the model cannot be loaded. */
  get(): LocalRuntime {
    return this.runtime ?? this.load();
  }

  private load(): LocalRuntime {
    if (performance.now() - this.failedAt < RETRY_MS) throw this.unavailable(undefined);
    try {
      const loaded = loadCachedLocalModel(this.location);
      if (!loaded) throw new Error(`the cache file ${this.location.path} is missing, unreadable or damaged`);
      this.runtime = this.build(loaded, 'local model loaded from cache');
      return this.runtime;
    } catch (cause) {
      this.failedAt = performance.now();
      this.options.logger.error({ path: this.location.path, err: cause }, 'local model could not be loaded');
      throw this.unavailable(cause);
    }
  }

  private unavailable(cause: unknown): VendorError {
    return new VendorError('The local model could not be loaded on this gateway (see its log); restarting the gateway rebuilds its cache.', {
      vendor: this.options.vendor,
      status: 503,
      type: 'service_unavailable',
      code: 'local_model_unavailable',
      retryable: true,
      cause,
    });
  }

  private build(loaded: LoadedLocalModel, message: string): LocalRuntime {
    const start = performance.now();
    const model = new LocalNgramModel(loaded.data);
    const runtime = { model, texts: new LocalTokenTexts(model.vocabulary), pool: new LocalWorkspacePool(model.vocabularySize + MAX_OUTSIDE_TOKENS) };
    this.options.logger.info(
      {
        path: loaded.path,
        trained: loaded.trained,
        trainingMs: Math.round(loaded.trainingMs),
        loadMs: Math.round(loaded.loadMs),
        buildMs: Math.round(performance.now() - start),
        vocabulary: model.vocabularySize,
      },
      message,
    );
    return runtime;
  }
}

/** Runs train-cli.ts for this cache location and waits for it (start-up waits for training either way); why it failed, or null. */
function trainInChildProcess(location: LocalModelLocation): string | null {
  const cli = fileURLToPath(new URL('./train-cli.js', import.meta.url));
  const result = spawnSync(process.execPath, [cli, dirname(location.path)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000 });
  if (result.error) return result.error.message;
  return result.status === 0 ? null : `exit ${result.status ?? result.signal}: ${result.stderr.trim().slice(-500)}`;
}
