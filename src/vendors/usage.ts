/** Arithmetic on `Usage`: the ledger adds up what every upstream call of a request billed. */
import type { Usage } from './types.js';

/** Nothing billed: what a call the vendor refused before any output costs (unless it said otherwise). */
export function noUsage(): Usage & { estimated: boolean } {
  return { promptTokens: 0, completionTokens: 0, cachedTokens: null, reasoningTokens: null, estimated: false };
}

/** The sum of two reports; an optional count stays null only when neither side reported it. */
export function addUsage(sum: Usage, usage: Usage): Usage {
  return {
    promptTokens: sum.promptTokens + usage.promptTokens,
    completionTokens: sum.completionTokens + usage.completionTokens,
    cachedTokens: addOptional(sum.cachedTokens, usage.cachedTokens),
    cacheWriteTokens: addOptional(sum.cacheWriteTokens, usage.cacheWriteTokens),
    reasoningTokens: addOptional(sum.reasoningTokens, usage.reasoningTokens),
    audioPromptTokens: addOptional(sum.audioPromptTokens, usage.audioPromptTokens),
    audioCompletionTokens: addOptional(sum.audioCompletionTokens, usage.audioCompletionTokens),
    acceptedPredictionTokens: addOptional(sum.acceptedPredictionTokens, usage.acceptedPredictionTokens),
    rejectedPredictionTokens: addOptional(sum.rejectedPredictionTokens, usage.rejectedPredictionTokens),
    estimated: sum.estimated === true || usage.estimated === true,
  };
}

function addOptional(left: number | null | undefined, right: number | null | undefined): number | null {
  return left == null && right == null ? null : (left ?? 0) + (right ?? 0);
}
