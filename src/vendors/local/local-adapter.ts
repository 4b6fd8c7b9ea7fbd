/**
 * The built-in `local` vendor: a real (small) language model running in-process. It honours every
 * legacy-completions parameter natively (nothing is emulated); `suffix` is refused (local-request-check.ts).
 */
import { historyAfter } from '../../local-model/context-history.js';
import { promptLogprobs } from '../../local-model/logprobs.js';
import { LocalModelLoader, type LocalRuntime } from '../../local-model/model-loader.js';
import type { LocalNgramModel } from '../../local-model/ngram-model.js';
import { LocalRandom } from '../../local-model/random.js';
import type { LocalTokenTexts } from '../../local-model/token-text.js';
import type { LocalWorkspacePool } from '../../local-model/workspace.js';
import type { Logger } from '../../observability/logger.js';
import type { GenerationOptions, GenerationPlan, GenerationRequest, ModelInfo, StreamPart, VendorAdapter } from '../types.js';
import { generateChoice, type LocalChoiceJob, type LocalChoiceResult } from './local-choice-generator.js';
import { LOCAL_VENDOR, localModels } from './local-models.js';
import { checkLocalRequest, type LocalCheckedRequest } from './local-request-check.js';

/** The local plan: nothing emulated, and the request as checked (its prompts tokenized once). */
type LocalPlan = GenerationPlan & { checked: LocalCheckedRequest };

/** The adapter, plus the model itself for tests and inspection (reading these loads the model). */
export interface LocalAdapter extends VendorAdapter<LocalPlan> {
  readonly model: LocalNgramModel;
  readonly texts: LocalTokenTexts;
  /** Workspaces for calling `model.accumulate` or `model.distribution` directly. */
  readonly pool: LocalWorkspacePool;
  /** Whether the model is in memory yet (it loads on first use; see local-model/model-loader.ts). */
  readonly modelLoaded: boolean;
}

/** `cacheDir`: directory of the cached trained model (default `<repo root>/.cache/local-model`). */
export async function createLocalAdapter(options: { logger: Logger; cacheDir?: string }): Promise<LocalAdapter> {
  const loader = new LocalModelLoader({ logger: options.logger.child({ vendor: LOCAL_VENDOR }), vendor: LOCAL_VENDOR, cacheDir: options.cacheDir });
  // Only `prepare` and `stream` (and the inspection getters) load the model; listing and resolving
  // models, and so /ready, never do.
  const runtime = (): LocalRuntime => loader.get();
  const models = localModels();
  return {
    name: LOCAL_VENDOR,
    get model() {
      return runtime().model;
    },
    get texts() {
      return runtime().texts;
    },
    get pool() {
      return runtime().pool;
    },
    get modelLoaded() {
      return loader.loaded;
    },
    listModels: () => models,
    resolveModel: (name) => models.find((candidate) => candidate.name === name) ?? null,
    prepare: (request, info) => ({ emulated: [], checked: checkLocalRequest(request, info, runtime().model) }),
    // Loads before the generator starts, and returns it unwrapped: no extra await per batch.
    stream: (request, info, generation) => streamLocal(runtime(), request, info, generation),
  };
}

async function* streamLocal(
  runtime: LocalRuntime,
  request: GenerationRequest,
  info: ModelInfo,
  generation: GenerationOptions<LocalPlan>,
): AsyncGenerator<StreamPart[]> {
  const { model } = runtime;
  const checked = generation.plan?.checked ?? checkLocalRequest(request, info, model);
  const bestOf = request.bestOf !== null && request.bestOf > 1 ? request.bestOf : null;
  let promptTokens = 0;
  let aborted = false;
  // Every choice and best_of candidate, counted as it goes: usage is reported however the generation ends.
  const results: LocalChoiceResult[] = [];
  try {
    for (const [promptIndex, prompt] of checked.prompts.entries()) {
      if (aborted) break;
      promptTokens += prompt.tokens.length;
      const logprobs = request.echo && request.logprobs !== null ? promptLogprobs(runtime, prompt.tokens, request.logprobs) : null;
      const echo = request.echo ? { text: prompt.text, logprobs } : null;
      // With best_of, every candidate is generated first; the best n by mean logprob per token are sent in rank order.
      const candidates: Array<{ parts: StreamPart[]; score: number; index: number }> = [];
      for (let index = 0; index < (bestOf ?? request.n) && !aborted; index++) {
        const result = { completionTokens: 0, logprobSum: 0, scoredTokens: 0, aborted: false };
        results.push(result);
        const job: LocalChoiceJob = {
          runtime,
          sampling: checked.sampling,
          history: historyAfter(model, prompt.tokens),
          echo,
          choice: bestOf === null ? promptIndex * request.n + index : -1,
          maxTokens: request.maxTokens,
          stop: request.stop,
          logprobs: request.logprobs,
          score: bestOf !== null,
          random: LocalRandom.forChoice(request.seed, promptIndex, index),
          signal: generation.signal,
        };
        if (bestOf === null) yield* generateChoice(job, result);
        else {
          const parts: StreamPart[] = [];
          for await (const batch of generateChoice(job, result)) parts.push(...batch);
          candidates.push({ parts, score: result.scoredTokens > 0 ? result.logprobSum / result.scoredTokens : 0, index });
        }
        aborted = result.aborted;
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
    generation.reportUsage({ promptTokens, completionTokens, cachedTokens: 0, reasoningTokens: 0 });
  }
}
