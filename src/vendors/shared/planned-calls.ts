/**
 * The upstream calls of a plan: one per call group, with the echo and stops the gateway emulates;
 * or, when the plan says `emptyAnswer`, one call the gateway answers itself: every choice finishes
 * at once with "length" (after its prompt, when echo is set), billed an exact zero, not an
 * estimate: no vendor was called.
 */
import type { GenerationRequest, ModelInfo, PromptInput } from '../types.js';
import { noUsage } from '../usage.js';
import type { CallPart } from './call-part.js';
import { promptText, type CallGroup, type GenerationPlanDetail } from './plan-generation.js';
import type { PlannedCall } from './run-upstream-calls.js';

/** What the vendor itself does for every call of a request: echo the prompt, rank several candidates per choice. */
export interface VendorSide {
  vendorEcho: boolean;
  candidatesPerChoice: number;
}

const gatewaySide: VendorSide = { vendorEcho: false, candidatesPerChoice: 1 };

/** `run(group, choiceCount)` makes one group's call. */
export function plannedCalls(
  request: GenerationRequest,
  model: ModelInfo,
  plan: GenerationPlanDetail,
  run: (group: CallGroup, choiceCount: number) => PlannedCall['run'],
  vendor: VendorSide = gatewaySide,
): PlannedCall[] {
  if (plan.emptyAnswer) {
    const choiceCount = request.prompts.length * request.n;
    return [call(plan, model, 0, request.prompts, request.n, gatewaySide, () => emptyAnswerParts(choiceCount))];
  }
  return plan.groups.map((group) => {
    const prompts = group.promptIndexes.map((index) => request.prompts[index]);
    return call(plan, model, group.choiceOffset, prompts, group.n, vendor, run(group, prompts.length * group.n));
  });
}

function call(
  plan: GenerationPlanDetail,
  model: ModelInfo,
  choiceOffset: number,
  prompts: PromptInput[],
  n: number,
  vendor: VendorSide,
  run: PlannedCall['run'],
): PlannedCall {
  const choiceCount = prompts.length * n;
  return {
    choiceOffset,
    choiceCount,
    echo: plan.gatewayEcho ? Array.from({ length: choiceCount }, (_, choice) => promptText(prompts[Math.floor(choice / n)])) : null,
    stops: plan.gatewayStops,
    prompts,
    vendorEcho: vendor.vendorEcho,
    candidatesPerChoice: vendor.candidatesPerChoice,
    countTokens: model.countTokens,
    run,
  };
}

async function* emptyAnswerParts(choiceCount: number): AsyncGenerator<CallPart[]> {
  const parts: CallPart[] = [];
  for (let choice = 0; choice < choiceCount; choice++) parts.push({ type: 'finish', choice, finishReason: 'length' });
  parts.push({ type: 'usage', usage: noUsage() });
  yield parts;
}
