/**
 * One choice's generated text as text-delta parts: nothing after a stop sequence and no partial
 * stop sequence is ever sent (StopMatcher), and with logprobs each delta carries the entries of
 * exactly the units (a token, or byte fragments that form characters) whose text it holds. A unit
 * cut by a stop sequence keeps the text before it, and a one-token unit's entry is cut the same way.
 */
import { StopMatcher } from '../shared/stop-matcher.js';
import type { StreamPart, TokenLogprob } from '../types.js';

interface PendingUnit {
  text: string;
  entries: TokenLogprob[];
}

export class LocalChoiceOutput {
  private readonly matcher: StopMatcher;
  private readonly queue: PendingUnit[] = [];
  /** Released characters not yet sent (a prefix of the queued units' text). */
  private available = 0;

  constructor(
    private readonly choice: number,
    stops: readonly string[],
    private readonly withLogprobs: boolean,
  ) {
    this.matcher = new StopMatcher(stops);
  }

  /** True once a stop sequence was found: the choice is over. */
  get stopped(): boolean {
    return this.matcher.stopped;
  }

  /** A unit of generated text; returns the part to send now, if any. */
  push(text: string, entries: TokenLogprob[] | null): StreamPart | null {
    if (this.matcher.inactive) return this.delta(text, entries);
    const result = this.matcher.push(text);
    if (!this.withLogprobs) return this.delta(result.text, null);
    this.queue.push({ text, entries: entries ?? [] });
    this.available += result.text.length;
    return this.release(result.stopped);
  }

  /** The choice ended without a stop sequence: send whatever was held back. */
  finish(): StreamPart | null {
    if (this.matcher.inactive || this.matcher.stopped) return null;
    const rest = this.matcher.flush();
    if (!this.withLogprobs) return this.delta(rest, null);
    this.available += rest.length;
    return this.release(true);
  }

  /** Sends the fully released units; with `final`, also the released part of a cut unit. */
  private release(final: boolean): StreamPart | null {
    let text = '';
    const entries: TokenLogprob[] = [];
    while (this.queue.length > 0 && this.queue[0].text.length <= this.available) {
      const unit = this.queue.shift() as PendingUnit;
      text += unit.text;
      for (const entry of unit.entries) entries.push(entry);
      this.available -= unit.text.length;
    }
    if (final && this.queue.length > 0 && this.available > 0) {
      const unit = this.queue[0];
      const kept = unit.text.slice(0, this.available);
      text += kept;
      if (unit.entries.length === 1) entries.push({ ...unit.entries[0], token: kept });
      else for (const entry of unit.entries) entries.push(entry);
    }
    if (final) {
      this.queue.length = 0;
      this.available = 0;
    }
    return this.delta(text, entries);
  }

  private delta(text: string, entries: TokenLogprob[] | null): StreamPart | null {
    if (text.length === 0) return null;
    return entries ? { type: 'text-delta', choice: this.choice, text, logprobs: entries } : { type: 'text-delta', choice: this.choice, text };
  }
}
