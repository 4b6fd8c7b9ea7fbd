/**
 * What one upstream call billed, however it ended. The call's raw parts pass through `observe`;
 * each attempt (a retry is a new attempt) ends with `endAttempt`, and the call's total is reported
 * once. The rules:
 * - the vendor reported its usage: that, as it is;
 * - the vendor answered but reported nothing (no usage, an empty usage object, a call the gateway
 *   abandoned at a stop sequence it enforces, a failure or cancel after output): an estimate marked
 *   `estimated`, built on the counts the vendor did report so far (its prompt count, when sent)
 *   and the tokenizer for the rest;
 * - the vendor refused the attempt before any output: nothing (zero, exact).
 * Estimates follow OpenAI's billing: every prompt the call carried counts once, an echoed prompt is
 * not completion tokens, and candidates the vendor ranked away (best_of) count like the ones kept.
 */
import type { PromptInput, Usage } from '../types.js';
import { addUsage, noUsage } from '../usage.js';
import type { CallPart } from './call-part.js';

/** What the estimate needs to know about a call. */
export interface CallUsageShape {
  /** The prompts this call carries, in order; each has `choiceCount / prompts.length` choices. */
  prompts: readonly PromptInput[];
  choiceCount: number;
  /** The vendor itself puts the prompt in front of each choice's text (native echo). */
  vendorEcho: boolean;
  /** Candidates the vendor generated per choice it returned (best_of ÷ n when it ranks them; else 1). */
  candidatesPerChoice: number;
  countTokens(text: string): number;
}

export class CallUsage {
  private readonly shape: CallUsageShape;
  private total: Usage | null = null;
  private reported: Usage | null = null;
  private progress: Usage | null = null;
  private answered = false;
  private texts: string[] = [];

  constructor(shape: CallUsageShape) {
    this.shape = shape;
  }

  observe(part: CallPart): void {
    if (part.type === 'usage-progress') this.progress = part.usage;
    else if (part.type !== 'metadata') {
      this.answered = true;
      if (part.type === 'usage') this.reported = part.usage;
      else if (part.type === 'text-delta') this.texts[part.choice] = (this.texts[part.choice] ?? '') + part.text;
    }
  }

  /**
   * Adds what the attempt billed. `completed`: the vendor's answer ended (or the gateway stopped
   * reading it at a stop sequence); otherwise the attempt failed or was cancelled.
   */
  endAttempt(completed: boolean): void {
    const billed = this.reported ?? (completed || this.answered ? this.estimate() : noUsage());
    this.total = this.total ? addUsage(this.total, billed) : billed;
    this.reported = null;
    this.progress = null;
    this.answered = false;
    this.texts = [];
  }

  /** Everything the call's attempts billed. */
  get billed(): Usage {
    return this.total ?? noUsage();
  }

  private estimate(): Usage {
    const { prompts, countTokens } = this.shape;
    const promptCounts = prompts.map((prompt) => (prompt.kind === 'tokens' ? prompt.tokens.length : countTokens(prompt.text)));
    const choicesPerPrompt = Math.max(1, this.shape.choiceCount / Math.max(1, prompts.length));
    let completion = 0;
    this.texts.forEach((text, choice) => {
      if (!text) return;
      const promptIndex = Math.floor(choice / choicesPerPrompt);
      completion += this.shape.vendorEcho ? withoutEcho(text, prompts[promptIndex], promptCounts[promptIndex], countTokens) : countTokens(text);
    });
    const progress = this.progress;
    return {
      promptTokens: progress?.promptTokens || promptCounts.reduce((sum, count) => sum + count, 0),
      completionTokens: Math.max(progress?.completionTokens ?? 0, Math.round(completion * this.shape.candidatesPerChoice)),
      cachedTokens: progress?.cachedTokens ?? null,
      reasoningTokens: progress?.reasoningTokens ?? null,
      estimated: true,
    };
  }
}

/** Completion tokens of a choice whose text starts with the echoed prompt. */
function withoutEcho(text: string, prompt: PromptInput | undefined, promptCount: number, countTokens: (text: string) => number): number {
  if (prompt?.kind === 'text' && text.startsWith(prompt.text)) return countTokens(text.slice(prompt.text.length));
  return Math.max(0, countTokens(text) - promptCount);
}
