/**
 * Collects parts into choices: text, finish reasons and logprobs with OpenAI's `text_offset`: each
 * token's character offset from the start of its prompt, so with echo the offset into the choice's
 * text, and without it the prompt's length plus the offset into the choice's text.
 */
import { decodeTokens } from '../tokenizer/tokenizer.js';
import type { FinishReason, GenerationRequest, PromptInput, StreamPart, TokenLogprob } from '../vendors/types.js';
import type { ChoiceLogprobs, CompletionChoice } from './completion-objects.js';

interface ChoiceState {
  /** The whole text, kept only when `toChoices` will be asked for it (not for streams). */
  text: string;
  /** The next token's text_offset, in UTF-16 units: the prompt's length without echo, plus the text's. */
  length: number;
  finishReason: FinishReason | null;
  logprobs: ChoiceLogprobs | null;
}

export class ChoiceAccumulator {
  private readonly choices: ChoiceState[];
  private readonly wantLogprobs: boolean;
  private readonly keepWhole: boolean;

  /**
   * One choice per prompt × n of `request`.
   * @param keepWhole collect each choice's whole text and logprobs for `toChoices` (a non-stream
   * answer); a stream sends every delta as it comes and only needs offsets and finish reasons.
   */
  constructor(request: Pick<GenerationRequest, 'prompts' | 'n' | 'logprobs' | 'echo'>, keepWhole = true) {
    this.wantLogprobs = request.logprobs !== null;
    this.keepWhole = keepWhole;
    // A plain loop: Array.from over `{ length }` took ~0.7% of a stream's CPU under load.
    this.choices = [];
    for (const prompt of request.prompts) {
      // Without echo the prompt comes before the choice's text; its length is only needed for offsets.
      const start = this.wantLogprobs && !request.echo ? promptLength(prompt) : 0;
      for (let index = 0; index < request.n; index++) this.choices.push({ text: '', length: start, finishReason: null, logprobs: null });
    }
  }

  /** Adds a text delta; returns the delta's logprobs object (offsets filled) for stream chunks. */
  addText(part: Extract<StreamPart, { type: 'text-delta' }>): ChoiceLogprobs | null {
    const state = this.choices[part.choice];
    if (!state) return null;
    let deltaLogprobs: ChoiceLogprobs | null = null;
    if (this.wantLogprobs) {
      deltaLogprobs = toLogprobs(part.logprobs ?? [], state.length);
      if (this.keepWhole) {
        state.logprobs ??= emptyLogprobs();
        state.logprobs.tokens.push(...deltaLogprobs.tokens);
        state.logprobs.token_logprobs.push(...deltaLogprobs.token_logprobs);
        state.logprobs.top_logprobs.push(...deltaLogprobs.top_logprobs);
        state.logprobs.text_offset.push(...deltaLogprobs.text_offset);
      }
    }
    if (this.keepWhole) state.text += part.text;
    state.length += part.text.length;
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
    if (!this.keepWhole) throw new Error('ChoiceAccumulator: toChoices needs keepWhole');
    return this.choices.map((state, index) => ({
      text: state.text,
      index,
      logprobs: this.wantLogprobs ? (state.logprobs ?? emptyLogprobs()) : null,
      // A choice the adapter never finished ended on the vendor's side without a reason: OpenAI's nearest is 'stop'.
      finish_reason: state.finishReason ?? 'stop',
    }));
  }
}

/**
 * A token's offset is the length of the text before it. A `bytes:` fragment adds the characters its
 * bytes complete (with the fragments before it), so the tokens after a character spelled in
 * fragments still point at themselves.
 */
function toLogprobs(tokens: TokenLogprob[], startOffset: number): ChoiceLogprobs {
  const out = emptyLogprobs();
  let offset = startOffset;
  let fragments: TextDecoder | null = null;
  for (const token of tokens) {
    const fragment = token.token.startsWith('bytes:');
    if (!fragment && fragments !== null) {
      // Bytes that never completed a character stand in the text as replacement characters.
      offset += fragments.decode().length;
      fragments = null;
    }
    out.tokens.push(token.token);
    out.token_logprobs.push(token.logprob);
    out.top_logprobs.push(token.topLogprobs);
    out.text_offset.push(offset);
    if (fragment) {
      // ignoreBOM: a fragment's EF BB BF is a character of the text, never a marker to drop.
      fragments ??= new TextDecoder('utf-8', { ignoreBOM: true });
      offset += fragments.decode(fragmentBytes(token.token), { stream: true }).length;
    } else offset += token.token.length;
  }
  return out;
}

/** The bytes of a fragment spelled `bytes:\xe2\x82`. */
function fragmentBytes(spelling: string): Uint8Array {
  const bytes: number[] = [];
  for (const match of spelling.matchAll(/\\x([0-9a-fA-F]{2})/g)) bytes.push(Number.parseInt(match[1], 16));
  return Uint8Array.from(bytes);
}

/** The prompt's length in characters (UTF-16 units); a token-array prompt as the gateway's tokenizer reads it. */
function promptLength(prompt: PromptInput): number {
  if (prompt.kind === 'text') return prompt.text.length;
  try {
    return decodeTokens(prompt.tokens).length;
  } catch {
    // Ids outside cl100k_base are another tokenizer's, whose text the gateway cannot know.
    return 0;
  }
}

function emptyLogprobs(): ChoiceLogprobs {
  return { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
}
