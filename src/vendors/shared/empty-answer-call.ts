/**
 * The one call the gateway answers itself when a plan says `emptyAnswer` (`max_tokens: 0` on a
 * vendor that cannot take it): every choice finishes at once with "length" — after its prompt,
 * when echo is set, which the shared shaping step prepends as for any call — and one usage part
 * of zero prompt and zero completion tokens. Exact zeros, not an estimate: no vendor was called,
 * so none billed anything.
 */
import type { GenerationRequest, ModelInfo } from '../types.js';
import type { CallPart } from './call-part.js';
import { promptText, type GenerationPlanDetail } from './plan-generation.js';
import type { PlannedCall } from './run-upstream-calls.js';

/** The planned call answering every choice of `request` empty, for `runUpstreamCalls`. */
export function emptyAnswerCall(request: GenerationRequest, model: ModelInfo, plan: GenerationPlanDetail): PlannedCall {
  const choiceCount = request.prompts.length * request.n;
  const echo = plan.gatewayEcho ? Array.from({ length: choiceCount }, (_, choice) => promptText(request.prompts[Math.floor(choice / request.n)])) : null;
  return {
    choiceOffset: 0,
    choiceCount,
    echo,
    stops: [],
    prompts: request.prompts,
    vendorEcho: false,
    candidatesPerChoice: 1,
    countTokens: model.countTokens,
    run: () => emptyAnswerParts(choiceCount),
  };
}

async function* emptyAnswerParts(choiceCount: number): AsyncGenerator<CallPart[]> {
  const parts: CallPart[] = [];
  for (let choice = 0; choice < choiceCount; choice++) parts.push({ type: 'finish', choice, finishReason: 'length' });
  parts.push({ type: 'usage', usage: { promptTokens: 0, completionTokens: 0, cachedTokens: null, reasoningTokens: null, estimated: false } });
  yield parts;
}
