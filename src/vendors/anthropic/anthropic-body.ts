import type { CallGroup, GenerationPlanDetail } from '../shared/plan-generation.js';
import { promptText } from '../shared/plan-generation.js';
import type { GenerationRequest } from '../types.js';

/** One prompt, one conversation: the prompt is the single user turn. */
export function anthropicBody(request: GenerationRequest, plan: GenerationPlanDetail, group: CallGroup): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: request.model,
    max_tokens: request.maxTokens,
    messages: [{ role: 'user', content: promptText(request.prompts[group.promptIndexes[0]]) }],
  };
  if (plan.vendorStops.length > 0) body.stop_sequences = plan.vendorStops;
  if (request.temperature !== null) body.temperature = request.temperature;
  if (request.topP !== null) body.top_p = request.topP;
  if (request.user !== null) body.metadata = { user_id: request.user };
  if (request.stream) body.stream = true;
  return body;
}
