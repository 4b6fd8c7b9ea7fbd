/**
 * What Gemini can honour, checked before any call. Emulated: prompt lists, n (parallel calls:
 * candidateCount is not offered by every model), stop beyond stopSequences' 5, echo without
 * logprobs, and `max_tokens: 0` (Gemini documents no zero-token generation; the gateway answers
 * empty choices itself, with no call).
 * Mapped: max_tokens → maxOutputTokens, temperature, top_p, seed, presence/frequency penalties.
 * Ranges (generationConfig): temperature 0–2 as ours; presencePenalty and frequencyPenalty from
 * -2 up to but not including 2 (ours include 2: exactly 2 is refused, never clamped); seed is an
 * int32, so a seed outside it is wrapped into it (seed-range.ts), and emulated choice r sends
 * seed + r wrapped the same way. Refused: the rest.
 */
import { planGeneration, type GenerationPlanDetail } from '../shared/plan-generation.js';
import { refuseAbove, refuseOutside, refuseUnsupported, tokenPromptReason, type NumberRange } from '../shared/refusals.js';
import { int32SeedRange } from '../shared/seed-range.js';
import type { GenerationRequest } from '../types.js';

export const geminiMaxStops = 5;

const geminiPenaltyRange: NumberRange = { min: -2, max: 2, maxExclusive: true };

export function planGemini(vendor: string, request: GenerationRequest): GenerationPlanDetail {
  refuseUnsupported(request, vendor, {
    prompt: tokenPromptReason,
    logprobs: 'Gemini logprobs are not offered by every model and do not map onto completions logprobs',
    logit_bias: 'Gemini has no logit_bias',
    best_of: 'Gemini cannot rank candidates',
    suffix: 'Gemini has no insertion mode',
    user: 'Gemini has no end-user field',
  });
  refuseAbove(vendor, 'temperature', request.temperature, 2);
  refuseOutside(vendor, 'presence_penalty', request.presencePenalty, geminiPenaltyRange);
  refuseOutside(vendor, 'frequency_penalty', request.frequencyPenalty, geminiPenaltyRange);
  return planGeneration(request, {
    promptList: false,
    nativeN: false,
    nativeEcho: false,
    maxStops: geminiMaxStops,
    seedRange: int32SeedRange,
    zeroMaxTokens: false,
  });
}
