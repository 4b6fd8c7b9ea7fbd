/**
 * The upstream calls of a plan: one per call group, with the echo and stops the gateway emulates;
 * or, when the plan says `emptyAnswer`, one call the gateway answers itself: every choice finishes
 * at once with "length" (after its prompt, when echo is set), billed an exact zero, not an
 * estimate: no vendor was called.
 */
import type { GenerationRequest, ModelInfo } from '../types.js';
import { noUsage } from '../usage.js';
import type { CallPart } from './call-part.js';
import type { CallUsageShape } from './call-usage.js';
import { promptText, type CallGroup, type GenerationPlanDetail } from './plan-generation.js';
import type { PlannedCall } from './run-upstream-calls.js';

/** What the vendor itself does for every call of a request: echo the prompt, rank several candidates per choice. */
export type VendorSide = Pick<CallUsageShape, 'vendorEcho' | 'candidatesPerChoice'>;

const gatewaySide: VendorSide = { vendorEcho: false, candidatesPerChoice: 1 };

/** `run(group, choiceCount)` makes one group's call; an empty answer is one call over every prompt. */
export function plannedCalls(
  request: GenerationRequest,
  model: ModelInfo,
  plan: GenerationPlanDetail,
  run: (group: CallGroup, choiceCount: number) => PlannedCall['run'],
  vendor: VendorSide = gatewaySide,
): PlannedCall[] {
  const empty = plan.emptyAnswer;
  const groups = empty ? [{ promptIndexes: request.prompts.map((_, index) => index), n: request.n, choiceOffset: 0, seed: null }] : plan.groups;
  const side = empty ? gatewaySide : vendor;
  return groups.map((group) => {
    const prompts = group.promptIndexes.map((index) => request.prompts[index]);
    const choiceCount = prompts.length * group.n;
    return {
      vendor: model.vendor,
      choiceOffset: group.choiceOffset,
      choiceCount,
      echo: plan.gatewayEcho ? Array.from({ length: choiceCount }, (_, choice) => promptText(prompts[Math.floor(choice / group.n)])) : null,
      stops: plan.gatewayStops,
      prompts,
      vendorEcho: side.vendorEcho,
      candidatesPerChoice: side.candidatesPerChoice,
      countTokens: model.countTokens,
      run: empty ? () => emptyAnswerParts(choiceCount) : run(group, choiceCount),
    };
  });
}

async function* emptyAnswerParts(choiceCount: number): AsyncGenerator<CallPart[]> {
  const parts: CallPart[] = [];
  for (let choice = 0; choice < choiceCount; choice++) parts.push({ type: 'finish', choice, finishReason: 'length' });
  parts.push({ type: 'usage', usage: noUsage() });
  yield parts;
}
