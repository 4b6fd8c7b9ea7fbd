/**
 * Enforces stop sequences on a stream of text deltas, across delta boundaries, without ever
 * releasing a partial stop sequence: text that could still become the start of a stop sequence is
 * held back until it is either completed (the stream stops before it) or ruled out (released).
 */
export interface StopMatchResult {
  /** Text that is now safe to send to the client. */
  text: string;
  /** True once a stop sequence was found; `text` then ends right before it and nothing more may follow. */
  stopped: boolean;
}

export class StopMatcher {
  private readonly stops: string[];
  private readonly longest: number;
  private pending = '';
  private done = false;

  constructor(stops: readonly string[]) {
    this.stops = stops.filter((stop) => stop.length > 0);
    this.longest = this.stops.reduce((max, stop) => Math.max(max, stop.length), 0);
  }

  /** True when there is nothing to enforce (no stop sequences). */
  get inactive(): boolean {
    return this.stops.length === 0;
  }

  get stopped(): boolean {
    return this.done;
  }

  /** Feed the next delta; returns what can be released now. */
  push(delta: string): StopMatchResult {
    if (this.done) return { text: '', stopped: true };
    if (this.stops.length === 0) return { text: delta, stopped: false };
    const buffer = this.pending + delta;
    let cut = -1;
    for (const stop of this.stops) {
      const at = buffer.indexOf(stop);
      if (at !== -1 && (cut === -1 || at < cut)) cut = at;
    }
    if (cut !== -1) {
      this.done = true;
      this.pending = '';
      return { text: buffer.slice(0, cut), stopped: true };
    }
    const hold = this.heldSuffixLength(buffer);
    this.pending = buffer.slice(buffer.length - hold);
    return { text: buffer.slice(0, buffer.length - hold), stopped: false };
  }

  /** The stream ended without a stop sequence: release whatever was held back. */
  flush(): string {
    if (this.done) return '';
    const rest = this.pending;
    this.pending = '';
    return rest;
  }

  /** Length of the longest suffix of `buffer` that is a proper prefix of some stop sequence. */
  private heldSuffixLength(buffer: string): number {
    const max = Math.min(this.longest - 1, buffer.length);
    for (let length = max; length > 0; length--) {
      const suffix = buffer.slice(buffer.length - length);
      for (const stop of this.stops) {
        if (stop.length > length && stop.startsWith(suffix)) return length;
      }
    }
    return 0;
  }
}
