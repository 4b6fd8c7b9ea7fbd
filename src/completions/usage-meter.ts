/**
 * Watches one request's generation and settles what it used: the sum of what each upstream call
 * (or each local generation) reported through `GenerationOptions.reportUsage`, the vendor's counts
 * or the call's own estimate marked `estimated`. Every adapter reports once per call however the
 * call ends (test/metering-matrix.test.ts holds each vendor to it), so this is the one estimate.
 */
import type { StreamPart, Usage } from '../vendors/types.js';
import { addUsage, noUsage } from '../vendors/usage.js';

export interface MeteredUsage extends Usage {
  estimated: boolean;
}

export class UsageMeter {
  private reported: Usage = noUsage();
  /** ms since start of the first text delta, or null. */
  firstTokenAt: number | null = null;
  private readonly startedAt: number;
  /** Bound once, passed to every adapter call as `reportUsage`. */
  readonly report = (usage: Usage): void => {
    this.reported = addUsage(this.reported, usage);
  };

  constructor(startedAt: number) {
    this.startedAt = startedAt;
  }

  observe(part: StreamPart): void {
    if (part.type === 'text-delta' && this.firstTokenAt === null) this.firstTokenAt = performance.now() - this.startedAt;
  }

  /** The settled usage: the sum of the reports (zero when no call was made). */
  settle(): MeteredUsage {
    return usageCopy(this.reported);
  }
}

/** A copy with every field present (null when not reported). */
function usageCopy(usage: Usage): MeteredUsage {
  return {
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    cachedTokens: usage.cachedTokens ?? null,
    reasoningTokens: usage.reasoningTokens ?? null,
    audioPromptTokens: usage.audioPromptTokens ?? null,
    audioCompletionTokens: usage.audioCompletionTokens ?? null,
    acceptedPredictionTokens: usage.acceptedPredictionTokens ?? null,
    rejectedPredictionTokens: usage.rejectedPredictionTokens ?? null,
    estimated: usage.estimated === true,
  };
}
