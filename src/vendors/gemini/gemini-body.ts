import type { CallGroup, GenerationPlanDetail } from '../shared/plan-generation.js';
import { promptText } from '../shared/plan-generation.js';
import type { GenerationRequest } from '../types.js';

/** One prompt, one conversation: the prompt is the single user turn. */
export function geminiBody(request: GenerationRequest, plan: GenerationPlanDetail, group: CallGroup): Record<string, unknown> {
  const generationConfig: Record<string, unknown> = { maxOutputTokens: request.maxTokens };
  if (request.temperature !== null) generationConfig.temperature = request.temperature;
  if (request.topP !== null) generationConfig.topP = request.topP;
  if (plan.vendorStops.length > 0) generationConfig.stopSequences = plan.vendorStops;
  // The plan already mapped the seed into Gemini's int32 range (per replica), so it is an exact double.
  if (group.seed !== null) generationConfig.seed = Number(group.seed);
  if (request.presencePenalty !== null) generationConfig.presencePenalty = request.presencePenalty;
  if (request.frequencyPenalty !== null) generationConfig.frequencyPenalty = request.frequencyPenalty;
  return {
    contents: [{ role: 'user', parts: [{ text: promptText(request.prompts[group.promptIndexes[0]]) }] }],
    generationConfig,
  };
}
