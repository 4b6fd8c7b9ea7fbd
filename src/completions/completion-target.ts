/**
 * One routed model for a request: the adapter and model it resolved to, the request as that
 * vendor gets it, and the vendor's plan, once the request fits the model's context window. An alias
 * has several targets, tried in order until one answers.
 */
import type { Caller } from '../auth/authenticate.js';
import { mostCostPico, type Price, type PriceList } from '../config/prices.js';
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
  /** What the model costs; null when neither the config file nor the vendor prices it. */
  price: Price | null;
}

/** Resolves `model` and lets its adapter check and plan the request (throws 400/404 GatewayErrors). */
export function prepareTarget(registry: VendorRegistry, prices: PriceList, model: string, parsed: ParsedCompletionRequest): CompletionTarget {
  const resolved = registry.resolve(model);
  if (parsed.api === 'chat' && !resolved.model.capabilities.chat) {
    throw invalidRequest(
      `'${resolved.model.id}' is a completions model without a chat endpoint: call POST /v5/completions with it.`,
      'model',
      'unsupported_model',
    );
  }
  const request: GenerationRequest = { model: resolved.model.name, ...parsed.generation };
  if (parsed.maxTokensOmitted) request.maxTokens = chatRoom(request, resolved.model);
  const promptCounts = checkContextWindow(request, resolved.model);
  const plan = resolved.adapter.prepare(request, resolved.model);
  return { resolved, request, plan, promptCounts, price: priceOf(prices, resolved) };
}

/** The configured price of a routed model, else the one its vendor states, else null. */
export function priceOf(prices: PriceList, resolved: ResolvedModel): Price | null {
  return prices.lookup(resolved.adapter.name, resolved.model.name) ?? resolved.model.price ?? null;
}

/**
 * The prices an alias's fallback models may be paid at: those that resolve (one that does not is
 * skipped at run time too), `vendor/model` and its price.
 */
export function fallbackPrices(registry: VendorRegistry, prices: PriceList, models: readonly string[]): { model: string; price: Price | null }[] {
  const found: { model: string; price: Price | null }[] = [];
  for (const model of models) {
    try {
      found.push({ model, price: priceOf(prices, registry.resolve(model)) });
    } catch {
      // An unknown or disabled fallback is never called.
    }
  }
  return found;
}

/** Without `max_tokens`, a chat completion may use what the context window leaves, up to this. */
export const DEFAULT_CHAT_MAX_TOKENS = 4096;

/** What the context window leaves after the conversation's transcript, at most DEFAULT_CHAT_MAX_TOKENS (at least 1: a prompt too long is refused next). */
function chatRoom(request: GenerationRequest, model: ModelInfo): number {
  const prompt = request.prompts[0];
  const count = prompt?.kind === 'text' ? model.countTokens(prompt.text) : 0;
  return Math.max(1, Math.min(DEFAULT_CHAT_MAX_TOKENS, model.contextWindow - count));
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
  private readonly fallbacks: readonly { model: string; price: Price | null }[];
  private prompt: number | null = null;

  constructor(ids: RequestLogIds, caller: Caller, target: CompletionTarget, fallbacks: readonly { model: string; price: Price | null }[] = []) {
    this.requestId = ids.requestId;
    this.completionId = ids.completionId;
    this.accountId = caller.account.id;
    this.keyId = caller.keyId;
    this.target = target;
    this.fallbacks = fallbacks;
  }

  /** Σ prompt × calls per prompt + max_tokens × max(n, best_of) × prompts. */
  get maxTokens(): number {
    const calls = this.fallbacks.length > 0 ? this.callsPerPrompt(null) : this.callsPerPrompt(this.target.plan);
    return this.promptTokens * calls + this.maxCompletionTokens;
  }

  /**
   * How many times each prompt is billed: once per upstream call, so n times where the gateway
   * emulates `n` with n calls. A fallback's plan is not made until it is used: count n for it.
   */
  private callsPerPrompt(plan: GenerationPlan | null): number {
    return plan === null || plan.emulated.includes('n') ? this.target.request.n : 1;
  }

  private get maxCompletionTokens(): number {
    const request = this.target.request;
    return request.maxTokens * Math.max(request.n, request.bestOf ?? 1) * request.prompts.length;
  }

  /** The most the request can cost, in nanodollars, at the dearest model it may be routed to (rounded up). */
  get maxCostNanoUsd(): number {
    const costAt = (price: Price | null, plan: GenerationPlan | null) =>
      price ? mostCostPico({ promptTokens: this.promptTokens * this.callsPerPrompt(plan), completionTokens: this.maxCompletionTokens }, price) : 0n;
    let most = costAt(this.target.price, this.target.plan);
    for (const fallback of this.fallbacks) {
      const cost = costAt(fallback.price, null);
      if (cost > most) most = cost;
    }
    return Number((most + 999n) / 1000n);
  }

  /** A model the request may be routed to that has no price, or null. */
  get unpricedModel(): string | null {
    const { resolved, price } = this.target;
    if (price === null) return `${resolved.adapter.name}/${resolved.model.name}`;
    return this.fallbacks.find((fallback) => fallback.price === null)?.model ?? null;
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
