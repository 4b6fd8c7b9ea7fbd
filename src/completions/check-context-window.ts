/**
 * prompt + max_tokens must fit the model's context window, per prompt. Counting tokens is the
 * costly part, so it happens only when a cheap bound cannot settle the question: a token is at
 * least one UTF-8 byte, and a UTF-16 code unit is at most three bytes, so `3 × length` (then the
 * byte length) bounds the count from above. The exact total is computed on first read, which only
 * admission does, and only when a budget or token limit applies.
 */
import { invalidRequest } from '../errors/gateway-error.js';
import type { GenerationRequest, ModelInfo, PromptInput } from '../vendors/types.js';

export interface ContextCheck {
  /** Prompt tokens over all prompts (exact where the tokenizer is the model's, else an estimate). */
  readonly promptTokens: number;
  /** The most tokens the request can use: Σ prompt + max_tokens × max(n, best_of) × prompts. */
  readonly maxTotal: number;
}

export function checkContextWindow(request: GenerationRequest, model: ModelInfo): ContextCheck {
  const window = model.contextWindow;
  if (request.maxTokens > window) {
    throw contextError(`'max_tokens' is ${request.maxTokens}, but this model's context window is ${window} tokens.`, 'max_tokens');
  }
  const counts: (number | null)[] = request.prompts.map((prompt) => {
    if (prompt.kind === 'tokens') return prompt.tokens.length;
    const room = window - request.maxTokens;
    if (prompt.text.length * 3 <= room || Buffer.byteLength(prompt.text, 'utf8') <= room) return null;
    return model.countTokens(prompt.text);
  });
  for (const count of counts) {
    if (count !== null && count + request.maxTokens > window) {
      throw contextError(
        `This model's maximum context length is ${window} tokens, however you requested ${count + request.maxTokens} tokens (${count} in your prompt; ${request.maxTokens} for the completion). Please reduce your prompt or completion length.`,
        'prompt',
      );
    }
  }
  return new CountedContext(request, model, counts);
}

/**
 * The counts, computed on first read. A class, not an object literal with getters: per-request
 * literals with getters made V8 keep the whole request through young-generation GCs (docs/performance.md,
 * "Objects that outlive their request").
 */
class CountedContext implements ContextCheck {
  private total: number | null = null;

  constructor(
    private readonly request: GenerationRequest,
    private readonly model: ModelInfo,
    private readonly counts: (number | null)[],
  ) {}

  get promptTokens(): number {
    if (this.total === null) this.total = this.request.prompts.reduce((sum, prompt, index) => sum + (this.counts[index] ?? countText(prompt, this.model)), 0);
    return this.total;
  }

  get maxTotal(): number {
    const request = this.request;
    return this.promptTokens + request.maxTokens * Math.max(request.n, request.bestOf ?? 1) * request.prompts.length;
  }
}

function countText(prompt: PromptInput, model: ModelInfo): number {
  return prompt.kind === 'tokens' ? prompt.tokens.length : model.countTokens(prompt.text);
}

function contextError(message: string, param: string) {
  return invalidRequest(message, param, 'context_length_exceeded');
}
