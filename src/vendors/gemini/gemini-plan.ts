/**
 * What Gemini can honour. Emulated: prompt lists, n (parallel calls: candidateCount is not offered
 * by every model), stop beyond stopSequences' 5, echo without logprobs. Mapped: max_tokens →
 * maxOutputTokens, temperature (0–2), top_p, seed, presence/frequency penalties. Refused: the rest.
 */
import { planGeneration, type GenerationPlanDetail } from '../shared/plan-generation.js';
import { refuseAbove, refuseUnsupported, tokenPromptReason } from '../shared/refusals.js';
import type { GenerationRequest } from '../types.js';

export const geminiMaxStops = 5;

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
  return planGeneration(request, { promptList: false, nativeN: false, nativeEcho: false, maxStops: geminiMaxStops });
}
