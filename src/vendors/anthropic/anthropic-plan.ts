/**
 * What Anthropic can honour, checked before any call. Emulated: prompt lists (one conversation
 * per prompt), n (parallel calls), stop sequences it rejects (whitespace-only ones, e.g. "\n";
 * enforced by the gateway), echo without logprobs, and `max_tokens: 0` (the Messages API wants at
 * least 1; the gateway answers empty choices itself, with no call).
 * Mapped: max_tokens, temperature, top_p, stop, user → metadata.user_id.
 * Ranges (Messages API): temperature 0–1 (ours reach 2: above 1 is refused, never clamped);
 * top_p 0–1 as ours. Anthropic has no seed, no presence or frequency penalty, no logit_bias:
 * refused by name, like everything else with no equivalent.
 */
import { planGeneration, type GenerationPlanDetail } from '../shared/plan-generation.js';
import { refuseAbove, refuseUnsupported, tokenPromptReason } from '../shared/refusals.js';
import type { GenerationRequest } from '../types.js';

export function planAnthropic(vendor: string, request: GenerationRequest): GenerationPlanDetail {
  refuseUnsupported(request, vendor, {
    prompt: tokenPromptReason,
    logprobs: 'Anthropic returns no token logprobs',
    logit_bias: 'Anthropic has no logit_bias',
    best_of: 'Anthropic cannot rank candidates',
    suffix: 'Anthropic has no insertion mode',
    seed: 'Anthropic has no seed',
    presence_penalty: 'Anthropic has no presence penalty',
    frequency_penalty: 'Anthropic has no frequency penalty',
  });
  refuseAbove(vendor, 'temperature', request.temperature, 1);
  return planGeneration(request, {
    promptList: false,
    nativeN: false,
    nativeEcho: false,
    maxStops: Number.MAX_SAFE_INTEGER,
    // The Messages API answers 400 to stop sequences without a non-whitespace character.
    acceptsStop: (stop) => /\S/.test(stop),
    seedRange: null,
    zeroMaxTokens: false,
  });
}
