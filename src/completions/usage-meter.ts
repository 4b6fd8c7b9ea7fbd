/**
 * Watches the parts of one request and settles what it used: the vendor's own counts when it
 * reported them, otherwise the model's tokenizer over what was sent and produced (marked estimated).
 */
import type { ModelInfo, PromptInput, StreamPart, Usage } from '../vendors/types.js';

export interface MeteredUsage extends Usage {
  estimated: boolean;
}

export class UsageMeter {
  private reported: Usage | null = null;
  private readonly generatedText: string[] = [];
  /** ms since start of the first text delta, or null. */
  firstTokenAt: number | null = null;
  private readonly startedAt: number;

  constructor(startedAt: number) {
    this.startedAt = startedAt;
  }

  observe(part: StreamPart): void {
    if (part.type === 'usage') {
      this.reported = addUsage(this.reported, part.usage);
    } else if (part.type === 'text-delta') {
      if (this.firstTokenAt === null) this.firstTokenAt = performance.now() - this.startedAt;
      this.generatedText[part.choice] = (this.generatedText[part.choice] ?? '') + part.text;
    }
  }

  get hasVendorUsage(): boolean {
    return this.reported !== null;
  }

  /** The settled usage. Estimates count prompts once each and all text produced (echo excluded). */
  settle(model: ModelInfo | null, prompts: PromptInput[], echo: boolean, n: number): MeteredUsage {
    if (this.reported) return usageCopy(this.reported);
    if (!model) return { promptTokens: 0, completionTokens: 0, estimated: false };
    let promptTokens = 0;
    const promptTexts: string[] = [];
    for (const prompt of prompts) {
      if (prompt.kind === 'tokens') {
        promptTokens += prompt.tokens.length;
        promptTexts.push('');
      } else {
        promptTokens += model.countTokens(prompt.text);
        promptTexts.push(prompt.text);
      }
    }
    let completionTokens = 0;
    this.generatedText.forEach((text, choice) => {
      if (!text) return;
      const prefix = echo ? promptTexts[Math.floor(choice / n)] ?? '' : '';
      const generated = prefix && text.startsWith(prefix) ? text.slice(prefix.length) : text;
      completionTokens += model.countTokens(generated);
    });
    return { promptTokens, completionTokens, cachedTokens: null, reasoningTokens: null, estimated: true };
  }
}

/**
 * A copy with every field present (null when not reported): one object of a fixed shape, where
 * copying whichever fields a vendor sent went through the runtime (~2k instructions a request).
 */
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

function addUsage(sum: Usage | null, usage: Usage): Usage {
  if (!sum) return usageCopy(usage);
  const add = (a: number | null | undefined, b: number | null | undefined) => (a == null && b == null ? null : (a ?? 0) + (b ?? 0));
  return {
    promptTokens: sum.promptTokens + usage.promptTokens,
    completionTokens: sum.completionTokens + usage.completionTokens,
    cachedTokens: add(sum.cachedTokens, usage.cachedTokens),
    reasoningTokens: add(sum.reasoningTokens, usage.reasoningTokens),
    audioPromptTokens: add(sum.audioPromptTokens, usage.audioPromptTokens),
    audioCompletionTokens: add(sum.audioCompletionTokens, usage.audioCompletionTokens),
    acceptedPredictionTokens: add(sum.acceptedPredictionTokens, usage.acceptedPredictionTokens),
    rejectedPredictionTokens: add(sum.rejectedPredictionTokens, usage.rejectedPredictionTokens),
    estimated: sum.estimated === true || usage.estimated === true,
  };
}
