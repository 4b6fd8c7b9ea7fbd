/** prompt + max_tokens must fit the model's context window, per prompt. */
import { invalidRequest } from '../http/gateway-error.js';
import type { GenerationRequest, ModelInfo } from '../vendors/types.js';

export interface ContextCheck {
  /** Prompt tokens over all prompts (exact where the tokenizer is the model's, else an estimate). */
  promptTokens: number;
  /** The most tokens the request can use: Σ prompt + max_tokens × max(n, best_of) × prompts. */
  maxTotal: number;
}

export function checkContextWindow(request: GenerationRequest, model: ModelInfo): ContextCheck {
  const window = model.contextWindow;
  if (request.maxTokens > window) {
    throw contextError(`'max_tokens' is ${request.maxTokens}, but this model's context window is ${window} tokens.`, 'max_tokens');
  }
  let promptTokens = 0;
  for (const prompt of request.prompts) {
    const count = prompt.kind === 'tokens' ? prompt.tokens.length : model.countTokens(prompt.text);
    promptTokens += count;
    if (count + request.maxTokens > window) {
      throw contextError(
        `This model's maximum context length is ${window} tokens, however you requested ${count + request.maxTokens} tokens (${count} in your prompt; ${request.maxTokens} for the completion). Please reduce your prompt or completion length.`,
        'prompt',
      );
    }
  }
  const perPrompt = Math.max(request.n, request.bestOf ?? 1);
  return { promptTokens, maxTotal: promptTokens + request.maxTokens * perPrompt * request.prompts.length };
}

function contextError(message: string, param: string) {
  return invalidRequest(message, param, 'context_length_exceeded');
}
