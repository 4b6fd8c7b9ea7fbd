/**
 * One routed model for a request: the adapter and model it resolved to, the request as that
 * vendor gets it, and the vendor's plan, once the request fits the model's context window. An alias
 * has several targets, tried in order until one answers.
 */
import type { Caller } from '../auth/authenticate.js';
import { invalidRequest } from '../errors/gateway-error.js';
import type { RequestLogIds } from '../observability/logger.js';
import type { AdmissionRequest } from '../usage/admission.js';
import type { ResolvedModel, VendorRegistry } from '../vendors/registry.js';
import type { GenerationPlan, GenerationRequest, ModelInfo } from '../vendors/types.js';
import type { ParsedCompletionRequest } from './parse-completion-request.js';

export interface CompletionTarget {
  resolved: ResolvedModel;
  request: GenerationRequest;
  plan: GenerationPlan;
  /** Each prompt's token count, where the context-window check had to count it. */
  promptCounts: (number | null)[];
}

/** Resolves `model` and lets its adapter check and plan the request (throws 400/404 GatewayErrors). */
export function prepareTarget(registry: VendorRegistry, model: string, parsed: ParsedCompletionRequest): CompletionTarget {
  const resolved = registry.resolve(model);
  const request: GenerationRequest = { model: resolved.model.name, ...parsed.generation };
  const promptCounts = checkContextWindow(request, resolved.model);
  const plan = resolved.adapter.prepare(request, resolved.model);
  return { resolved, request, plan, promptCounts };
}

/**
 * prompt + max_tokens must fit the model's context window, per prompt. Counting tokens is the
 * costly part, so it happens only when a cheap bound cannot settle the question: a token is at
 * least one UTF-8 byte, and a UTF-16 code unit is at most three bytes, so `3 × length` (then the
 * byte length) bounds the count from above.
 */
function checkContextWindow(request: GenerationRequest, model: ModelInfo): (number | null)[] {
  const window = model.contextWindow;
  if (request.maxTokens > window) {
    throw invalidRequest(`'max_tokens' is ${request.maxTokens}, but this model's context window is ${window} tokens.`, 'max_tokens', 'context_length_exceeded');
  }
  const room = window - request.maxTokens;
  const counts = request.prompts.map((prompt) => {
    if (prompt.kind === 'tokens') return prompt.tokens.length;
    if (prompt.text.length * 3 <= room || Buffer.byteLength(prompt.text, 'utf8') <= room) return null;
    return model.countTokens(prompt.text);
  });
  for (const count of counts) {
    if (count !== null && count > room) {
      throw invalidRequest(
        `This model's maximum context length is ${window} tokens, however you requested ${count + request.maxTokens} tokens (${count} in your prompt; ${request.maxTokens} for the completion). Please reduce your prompt or completion length.`,
        'prompt',
        'context_length_exceeded',
      );
    }
  }
  return counts;
}

/**
 * What admission reads. The token counts are computed on first read, which only happens when a
 * budget or token limit applies. A class, not an object literal with getters: per-request literals
 * with getters made V8 keep the whole request through young-generation GCs (docs/performance.md,
 * "Objects that outlive their request").
 */
export class AdmissionAsk implements AdmissionRequest {
  readonly requestId: string;
  readonly completionId: string;
  readonly accountId: string;
  readonly keyId: string | null;
  private readonly target: CompletionTarget;
  private prompt: number | null = null;

  constructor(ids: RequestLogIds, caller: Caller, target: CompletionTarget) {
    this.requestId = ids.requestId;
    this.completionId = ids.completionId;
    this.accountId = caller.account.id;
    this.keyId = caller.keyId;
    this.target = target;
  }

  /** Σ prompt + max_tokens × max(n, best_of) × prompts. */
  get maxTokens(): number {
    const request = this.target.request;
    return this.promptTokens + request.maxTokens * Math.max(request.n, request.bestOf ?? 1) * request.prompts.length;
  }

  /** Over all prompts: exact where the tokenizer is the model's, else an estimate. */
  get promptTokens(): number {
    const { request, resolved, promptCounts } = this.target;
    this.prompt ??= request.prompts.reduce(
      (sum, prompt, index) => sum + (promptCounts[index] ?? (prompt.kind === 'tokens' ? prompt.tokens.length : resolved.model.countTokens(prompt.text))),
      0,
    );
    return this.prompt;
  }
}
