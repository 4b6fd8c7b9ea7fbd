/**
 * The one call the gateway answers itself when a plan says `emptyAnswer`: every choice finishes at
 * once with "length" (after its prompt, when echo is set, which the shared shaping prepends as for
 * any call), billed an exact zero, not an estimate: no vendor was called.
 */
import type { GenerationRequest, ModelInfo } from '../types.js';
import { noUsage } from '../usage.js';
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
  parts.push({ type: 'usage', usage: noUsage() });
  yield parts;
}
