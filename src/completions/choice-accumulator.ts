/**
 * Collects parts into choices: text, finish reasons and logprobs with OpenAI's `text_offset`
 * (each token's character offset in the choice's full text, echo included).
 */
import type { FinishReason, StreamPart, TokenLogprob } from '../vendors/types.js';
import type { ChoiceLogprobs, CompletionChoice } from './completion-objects.js';

interface ChoiceState {
  text: string;
  finishReason: FinishReason | null;
  logprobs: ChoiceLogprobs | null;
}

export class ChoiceAccumulator {
  private readonly choices: ChoiceState[];
  private readonly wantLogprobs: boolean;

  constructor(count: number, wantLogprobs: boolean) {
    this.wantLogprobs = wantLogprobs;
    this.choices = Array.from({ length: count }, () => ({ text: '', finishReason: null, logprobs: null }));
  }

  /** Current text length of a choice, the offset of the next token. */
  textLength(choice: number): number {
    return this.choices[choice]?.text.length ?? 0;
  }

  /** Adds a text delta; returns the delta's logprobs object (offsets filled) for stream chunks. */
  addText(part: Extract<StreamPart, { type: 'text-delta' }>): ChoiceLogprobs | null {
    const state = this.choices[part.choice];
    if (!state) return null;
    let deltaLogprobs: ChoiceLogprobs | null = null;
    if (this.wantLogprobs) {
      deltaLogprobs = toLogprobs(part.logprobs ?? [], state.text.length);
      if (!state.logprobs) state.logprobs = { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
      state.logprobs.tokens.push(...deltaLogprobs.tokens);
      state.logprobs.token_logprobs.push(...deltaLogprobs.token_logprobs);
      state.logprobs.top_logprobs.push(...deltaLogprobs.top_logprobs);
      state.logprobs.text_offset.push(...deltaLogprobs.text_offset);
    }
    state.text += part.text;
    return deltaLogprobs;
  }

  finish(choice: number, reason: FinishReason): void {
    const state = this.choices[choice];
    if (state && state.finishReason === null) state.finishReason = reason;
  }

  isFinished(choice: number): boolean {
    return this.choices[choice]?.finishReason != null;
  }

  get count(): number {
    return this.choices.length;
  }

  toChoices(): CompletionChoice[] {
    return this.choices.map((state, index) => ({
      text: state.text,
      index,
      logprobs: this.wantLogprobs ? state.logprobs ?? { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] } : null,
      // A choice the adapter never finished ended on the vendor's side without a reason: OpenAI's nearest is 'stop'.
      finish_reason: state.finishReason ?? 'stop',
    }));
  }
}

function toLogprobs(tokens: TokenLogprob[], startOffset: number): ChoiceLogprobs {
  const out: ChoiceLogprobs = { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
  let offset = startOffset;
  for (const token of tokens) {
    out.tokens.push(token.token);
    out.token_logprobs.push(token.logprob);
    out.top_logprobs.push(token.topLogprobs);
    out.text_offset.push(offset);
    offset += token.token.startsWith('bytes:') ? 0 : token.token.length;
  }
  return out;
}
