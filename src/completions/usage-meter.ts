/**
 * Watches one request's generation and settles what it used: the sum of what each upstream call
 * reported through `GenerationOptions.reportUsage` (the vendor's counts, or the call's own estimate
 * marked `estimated`). Should an adapter report nothing although it produced output, the model's
 * tokenizer estimates the request instead, so that output is never recorded as free.
 */
import type { ModelInfo, PromptInput, StreamPart, Usage } from '../vendors/types.js';
import { addUsage, noUsage } from '../vendors/usage.js';

export interface MeteredUsage extends Usage {
  estimated: boolean;
}

export class UsageMeter {
  private reported: Usage | null = null;
  private readonly generatedText: string[] = [];
  /** ms since start of the first text delta, or null. */
  firstTokenAt: number | null = null;
  private readonly startedAt: number;
  /** Bound once, passed to every adapter call as `reportUsage`. */
  readonly report = (usage: Usage): void => {
    this.reported = addUsage(this.reported ?? noUsage(), usage);
  };

  constructor(startedAt: number) {
    this.startedAt = startedAt;
  }

  observe(part: StreamPart): void {
    if (part.type !== 'text-delta') return;
    if (this.firstTokenAt === null) this.firstTokenAt = performance.now() - this.startedAt;
    this.generatedText[part.choice] = (this.generatedText[part.choice] ?? '') + part.text;
  }

  /** The settled usage; `echo` and `n` say which prompt each choice's text may start with. */
  settle(model: ModelInfo | null, prompts: PromptInput[], echo: boolean, n: number): MeteredUsage {
    if (this.reported) return usageCopy(this.reported);
    if (!model || this.generatedText.length === 0) return usageCopy(noUsage());
    let promptTokens = 0;
    const promptTexts: string[] = [];
    for (const prompt of prompts) {
      promptTokens += prompt.kind === 'tokens' ? prompt.tokens.length : model.countTokens(prompt.text);
      promptTexts.push(prompt.kind === 'text' ? prompt.text : '');
    }
    let completionTokens = 0;
    this.generatedText.forEach((text, choice) => {
      if (!text) return;
      const prefix = echo ? (promptTexts[Math.floor(choice / n)] ?? '') : '';
      completionTokens += model.countTokens(prefix && text.startsWith(prefix) ? text.slice(prefix.length) : text);
    });
    return { promptTokens, completionTokens, cachedTokens: null, reasoningTokens: null, estimated: true };
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
