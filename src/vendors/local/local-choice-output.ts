/**
 * Turns one choice's generated text into text-delta parts: stop sequences are enforced by the
 * shared StopMatcher (nothing after a stop sequence, no partial stop sequence ever released), and
 * with logprobs every delta carries the entries of exactly the tokens whose text it contains.
 *
 * Text arrives in units: one token, or a few byte-fragment tokens that together form characters.
 * Released text is attributed to whole units; a unit is sent once all of its text is released.
 * When a stop sequence cuts a unit, the cut unit's text is what precedes the stop sequence, and a
 * single-token unit's logprob entry is cut the same way, so its `token` still matches the text.
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
