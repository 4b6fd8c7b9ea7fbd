/**
 * Checks shared by adapters: which request parameters are actually in use, and refusing those a
 * vendor cannot honour. No-op values (penalty 0, empty logit_bias, best_of equal to n) are not
 * "in use": refusing them would reject requests the vendor answers identically.
 */
import { unsupportedParameter } from '../../errors/gateway-error.js';
import type { GenerationRequest } from '../types.js';

const inUseTests = {
  best_of: (request) => request.bestOf !== null && request.bestOf > request.n,
  logprobs: (request) => request.logprobs !== null,
  logit_bias: (request) => request.logitBias !== null && Object.keys(request.logitBias).length > 0,
  suffix: (request) => request.suffix !== null && request.suffix !== '',
  seed: (request) => request.seed !== null,
  presence_penalty: (request) => request.presencePenalty !== null && request.presencePenalty !== 0,
  frequency_penalty: (request) => request.frequencyPenalty !== null && request.frequencyPenalty !== 0,
  user: (request) => request.user !== null,
  echo: (request) => request.echo,
  prompt: (request) => request.prompts.some((prompt) => prompt.kind === 'tokens'),
  temperature: (request) => request.temperature !== null,
  top_p: (request) => request.topP !== null,
} satisfies Record<string, (request: GenerationRequest) => boolean>;

/** A parameter an adapter may refuse (`prompt`: token-array prompts). */
export type RequestParam = keyof typeof inUseTests;

export const requestParams = Object.keys(inUseTests) as RequestParam[];

export function inUse(request: GenerationRequest, param: RequestParam): boolean {
  return inUseTests[param](request);
}

/** Throws a 400 naming the first parameter in use that `unsupported` lists, with its reason. */
export function refuseUnsupported(request: GenerationRequest, vendor: string, unsupported: Partial<Record<RequestParam, string>>): void {
  for (const [param, why] of Object.entries(unsupported) as [RequestParam, string][]) {
    if (inUse(request, param)) throw unsupportedParameter(param, vendor, why);
  }
}

export function refuseAbove(vendor: string, param: 'temperature' | 'top_p', value: number | null, max: number): void {
  if (value !== null && value > max) throw unsupportedParameter(param, vendor, `its range is 0–${max}, got ${value} (the gateway does not clamp)`);
}

/** Throws a 400 naming the parameter and vendor unless `value` lies in [min, below) (Gemini's penalties stop just below 2). */
export function refuseOutside(vendor: string, param: RequestParam, value: number | null, min: number, below: number): void {
  if (value !== null && (value < min || value >= below)) {
    throw unsupportedParameter(param, vendor, `its range is ${min} to below ${below}, got ${value} (the gateway does not clamp)`);
  }
}

/** What `max_tokens: 0` cannot be emulated with: the answer would lack logprobs, or an echoed token prompt's text. */
export function refuseUnemulatedZeroTokens(request: GenerationRequest, vendor: string): void {
  if (request.maxTokens !== 0) return;
  if (inUse(request, 'logprobs')) {
    throw unsupportedParameter('max_tokens', vendor, "it cannot generate zero tokens, and the gateway cannot answer for it with 'logprobs'");
  }
  if (request.echo && inUse(request, 'prompt')) {
    throw unsupportedParameter('max_tokens', vendor, 'it cannot generate zero tokens, and the gateway cannot echo a token-array prompt for it');
  }
}

export const tokenPromptReason = "token-array prompts need the model's own tokenizer, which this vendor does not accept";
