/**
 * Checks shared by adapters: which request parameters are actually in use, and refusing those a
 * vendor cannot honour. No-op values (penalty 0, empty logit_bias, best_of equal to n) are not
 * "in use": refusing them would reject requests the vendor answers identically.
 */
import { unsupportedParameter } from '../../errors/gateway-error.js';
import type { GenerationRequest } from '../types.js';

export type RequestParam =
  | 'best_of'
  | 'logprobs'
  | 'logit_bias'
  | 'suffix'
  | 'seed'
  | 'presence_penalty'
  | 'frequency_penalty'
  | 'user'
  | 'echo'
  | 'prompt'
  | 'temperature'
  | 'top_p';

export function inUse(request: GenerationRequest, param: RequestParam): boolean {
  switch (param) {
    case 'best_of':
      return request.bestOf !== null && request.bestOf > request.n;
    case 'logprobs':
      return request.logprobs !== null;
    case 'logit_bias':
      return request.logitBias !== null && Object.keys(request.logitBias).length > 0;
    case 'suffix':
      return request.suffix !== null && request.suffix !== '';
    case 'seed':
      return request.seed !== null;
    case 'presence_penalty':
      return request.presencePenalty !== null && request.presencePenalty !== 0;
    case 'frequency_penalty':
      return request.frequencyPenalty !== null && request.frequencyPenalty !== 0;
    case 'user':
      return request.user !== null;
    case 'echo':
      return request.echo;
    case 'prompt':
      return request.prompts.some((prompt) => prompt.kind === 'tokens');
    case 'temperature':
      return request.temperature !== null;
    case 'top_p':
      return request.topP !== null;
  }
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

/** A vendor's accepted interval for a number; `maxExclusive` when the upper bound itself is refused. */
export interface NumberRange {
  /** Smallest accepted value. */
  min: number;
  /** Largest accepted value, or the bound just above them when `maxExclusive`. */
  max: number;
  /** The vendor refuses `max` itself (Gemini's penalties stop just below 2). */
  maxExclusive?: boolean;
}

/** Throws a 400 naming the parameter and vendor when a given value lies outside the vendor's range. */
export function refuseOutside(vendor: string, param: RequestParam, value: number | null, range: NumberRange): void {
  if (value === null) return;
  const aboveMax = range.maxExclusive === true ? value >= range.max : value > range.max;
  if (value < range.min || aboveMax) {
    const upper = range.maxExclusive === true ? `below ${range.max}` : `${range.max}`;
    throw unsupportedParameter(param, vendor, `its range is ${range.min} to ${upper}, got ${value} (the gateway does not clamp)`);
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
