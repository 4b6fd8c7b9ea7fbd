/**
 * The built-in `local` vendor: a real (small) language model running in-process. It honours every
 * legacy-completions parameter natively (nothing is emulated): n, best_of, stop, echo, logprobs,
 * logit_bias, penalties, temperature, top_p and seed. `suffix` is refused (see local-request-check).
 */
import { VendorError } from '../../errors/vendor-error.js';
import { historyAfter } from '../../local-model/context-history.js';
import { LocalModelLoader, LocalModelUnavailableError, type LocalRuntime } from '../../local-model/model-loader.js';
import type { LocalNgramModel } from '../../local-model/ngram-model.js';
import { promptLogprobs } from '../../local-model/prompt-logprobs.js';
import { LocalRandom } from '../../local-model/random.js';
import type { LocalTokenTexts } from '../../local-model/token-text.js';
import type { LocalWorkspacePool } from '../../local-model/workspace.js';
import type { Logger } from '../../observability/logger.js';
import type { GenerationOptions, GenerationPlan, GenerationRequest, ModelInfo, StreamPart, VendorAdapter } from '../types.js';
import { generateChoice, type LocalChoiceJob, type LocalChoiceResult } from './local-choice-generator.js';
import { localModels } from './local-models.js';
import { checkLocalRequest, LOCAL_VENDOR, type LocalCheckedRequest } from './local-request-check.js';

export interface LocalAdapterOptions {
  logger: Logger;
  /** Directory of the cached trained model (default `<repo root>/.cache/local-model`). */
  cacheDir?: string;
}

/** The local plan: nothing emulated, and the request as checked (its prompts tokenized once). */
export interface LocalPlan extends GenerationPlan {
  checked: LocalCheckedRequest;
}

/** The adapter, plus the model itself for tests and inspection (reading these loads the model). */
export interface LocalAdapter extends VendorAdapter<LocalPlan> {
  readonly model: LocalNgramModel;
  readonly texts: LocalTokenTexts;
  /** A fresh workspace for calling `model.accumulate` or `model.distribution` directly. */
  readonly pool: LocalWorkspacePool;
  /** Whether the model is in memory yet (it loads on first use; see local-model/model-loader.ts). */
  readonly modelLoaded: boolean;
}

export async function createLocalAdapter(options: LocalAdapterOptions): Promise<LocalAdapter> {
  const loader = new LocalModelLoader({ logger: options.logger.child({ vendor: LOCAL_VENDOR }), cacheDir: options.cacheDir });
  // Bound by `use()`, which `prepare` calls before any generation, so that listing and resolving
  // models (and /ready) never load the model: it loads on the first local request.
  let runtime: LocalRuntime;
  let model: LocalNgramModel;
  let texts: LocalTokenTexts;
  let pool: LocalWorkspacePool;
  const use = (): void => {
    runtime = loadRuntime(loader);
    ({ model, texts, pool } = runtime);
  };
  const models = localModels();

  async function* stream(request: GenerationRequest, info: ModelInfo, generation: GenerationOptions<LocalPlan>): AsyncGenerator<StreamPart[]> {
    const checked = generation.plan?.checked ?? checkLocalRequest(request, info, model);
    const bestOf = request.bestOf !== null && request.bestOf > 1 ? request.bestOf : null;
    let promptTokens = 0;
    let aborted = false;
    // Every choice and best_of candidate generated, counted as it goes: the usage is reported however
    // the generation ends (done, cancelled mid-choice, failed), with the model's own counts.
    const results: LocalChoiceResult[] = [];
    const started = (): LocalChoiceResult => {
      const result = emptyResult();
      results.push(result);
      return result;
    };
    try {
      for (const [promptIndex, prompt] of checked.prompts.entries()) {
        if (aborted) break;
        promptTokens += prompt.tokens.length;
        const echo = request.echo ? echoFor(prompt.tokens, prompt.text, request.logprobs) : null;
        const job = (choice: number, candidate: number): LocalChoiceJob => ({
          runtime,
          sampling: checked.sampling,
          history: historyAfter(model, prompt.tokens),
          echo,
          choice,
          maxTokens: request.maxTokens,
          stop: request.stop,
          logprobs: request.logprobs,
          score: bestOf !== null,
          random: LocalRandom.forChoice(request.seed, promptIndex, candidate),
          signal: generation.signal,
        });
        if (bestOf === null) {
          for (let index = 0; index < request.n && !aborted; index++) {
            const result = started();
            yield* generateChoice(job(promptIndex * request.n + index, index), result);
            aborted = result.aborted;
          }
          continue;
        }
        // best_of: generate every candidate, rank by mean logprob per token, send the best n in rank order.
        const candidates: Array<{ parts: StreamPart[]; score: number; index: number }> = [];
        for (let candidate = 0; candidate < bestOf && !aborted; candidate++) {
          const result = started();
          const parts: StreamPart[] = [];
          for await (const batch of generateChoice(job(-1, candidate), result)) parts.push(...batch);
          aborted = result.aborted;
          const score = result.scoredTokens > 0 ? result.logprobSum / result.scoredTokens : 0;
          candidates.push({ parts, score, index: candidate });
        }
        if (aborted) break;
        candidates.sort((left, right) => right.score - left.score || left.index - right.index);
        for (const [rank, candidate] of candidates.slice(0, request.n).entries()) {
          const choice = promptIndex * request.n + rank;
          if (candidate.parts.length > 0) yield candidate.parts.map((part) => ('choice' in part ? { ...part, choice } : part));
        }
      }
    } finally {
      const completionTokens = results.reduce((sum, result) => sum + result.completionTokens, 0);
      generation.reportUsage?.({ promptTokens, completionTokens, cachedTokens: 0, reasoningTokens: 0 });
    }
  }

  function echoFor(tokens: number[], text: string, logprobs: number | null): LocalChoiceJob['echo'] {
    if (logprobs === null) return { text, logprobs: null };
    const workspace = pool.acquire();
    try {
      return { text, logprobs: promptLogprobs(model, texts, workspace, tokens, logprobs) };
    } finally {
      pool.release(workspace);
    }
  }

  return {
    name: LOCAL_VENDOR,
    get model() {
      use();
      return model;
    },
    get texts() {
      use();
      return texts;
    },
    get pool() {
      use();
      return pool;
    },
    get modelLoaded() {
      return loader.loaded;
    },
    listModels: () => models,
    resolveModel: (name) => models.find((candidate) => candidate.name === name) ?? null,
    prepare(request: GenerationRequest, info: ModelInfo): LocalPlan {
      use();
      return { emulated: [], checked: checkLocalRequest(request, info, model) };
    },
    // The pipeline always prepares first, so this `use()` is a no-op there; it covers direct callers.
    // A plain function rather than a wrapping generator: no extra await per batch.
    stream(request: GenerationRequest, info: ModelInfo, generation: GenerationOptions<LocalPlan>): AsyncGenerator<StreamPart[]> {
      use();
      return stream(request, info, generation);
    },
  };
}

/** The loaded model; a model that cannot be read is a 503 the client may retry (the file path stays in the log). */
function loadRuntime(loader: LocalModelLoader): LocalRuntime {
  try {
    return loader.get();
  } catch (error) {
    if (!(error instanceof LocalModelUnavailableError)) throw error;
    throw new VendorError('The local model could not be loaded on this gateway (see its log); restarting the gateway rebuilds its cache.', {
      vendor: LOCAL_VENDOR,
      status: 503,
      type: 'service_unavailable',
      code: 'local_model_unavailable',
      retryable: true,
      cause: error.cause ?? undefined,
    });
  }
}

function emptyResult(): LocalChoiceResult {
  return { completionTokens: 0, logprobSum: 0, scoredTokens: 0, aborted: false };
}
