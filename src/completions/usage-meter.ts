/**
 * Watches one request's generation and settles what it used: the sum of what each upstream call
 * (or each local generation) reported through `GenerationOptions.reportUsage`, the vendor's counts
 * or the call's own estimate marked `estimated`. Every adapter reports once per call however the
 * call ends (test/metering-matrix.test.ts holds each vendor to it), so this is the one estimate.
 * Each report is priced at the model that made it (an alias may fall back to another), so the
 * cost is exact however many models a request went through.
 */
import { costPico, picoToNano, type Price } from '../config/prices.js';
import type { StreamPart, Usage } from '../vendors/types.js';
import { addUsage, noUsage } from '../vendors/usage.js';

export interface MeteredUsage extends Usage {
  estimated: boolean;
  /** What the usage cost, in nanodollars (10⁻⁹ USD); null when tokens were used on a model without a price. */
  costNanoUsd: number | null;
}

/** Nothing used, nothing paid: a request refused before it ran. */
export const NOTHING_USED: Readonly<MeteredUsage> = Object.freeze({ ...noUsage(), costNanoUsd: 0 });

export class UsageMeter {
  private reported: Usage = noUsage();
  private costPico = 0n;
  private unpriced = false;
  /** ms since start of the first text delta, or null. */
  firstTokenAt: number | null = null;
  private readonly startedAt: number;

  constructor(startedAt: number) {
    this.startedAt = startedAt;
  }

  /** The `reportUsage` for calls to a model at `price` (null: the model has no price). */
  reporter(price: Price | null): (usage: Usage) => void {
    return (usage) => {
      this.reported = addUsage(this.reported, usage);
      if (price) this.costPico += costPico(usage, price);
      else if (usage.promptTokens + usage.completionTokens > 0) this.unpriced = true;
    };
  }

  observe(part: StreamPart): void {
    if (part.type === 'text-delta' && this.firstTokenAt === null) this.firstTokenAt = performance.now() - this.startedAt;
  }

  /** The settled usage: the sum of the reports (zero when no call was made). */
  settle(): MeteredUsage {
    const usage = this.reported;
    return {
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      cachedTokens: usage.cachedTokens ?? null,
      cacheWriteTokens: usage.cacheWriteTokens ?? null,
      reasoningTokens: usage.reasoningTokens ?? null,
      audioPromptTokens: usage.audioPromptTokens ?? null,
      audioCompletionTokens: usage.audioCompletionTokens ?? null,
      acceptedPredictionTokens: usage.acceptedPredictionTokens ?? null,
      rejectedPredictionTokens: usage.rejectedPredictionTokens ?? null,
      estimated: usage.estimated === true,
      costNanoUsd: this.unpriced ? null : picoToNano(this.costPico),
    };
  }
}
