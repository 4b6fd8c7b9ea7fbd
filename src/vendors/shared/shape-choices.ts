/**
 * Turns one upstream call's parts into client-facing parts: local → global choice indexes, the
 * echoed prompt prepended (lazily, right before the choice's first output, so an upstream failure
 * before output is still an HTTP error), and gateway-enforced stop sequences (StopMatcher, across
 * chunk boundaries). Once every choice of the call hit a stop, the call is `abandoned`: the caller
 * stops reading it, which ends the upstream request. Usage parts stay behind (see call-usage.ts).
 */
import type { StreamPart } from '../types.js';
import type { CallPart } from './call-part.js';
import { malformedUpstream } from './map-upstream-error.js';
import { StopMatcher } from './stop-matcher.js';

export interface CallShape {
  /** The vendor called, named in the error when it answers a choice it was not asked for. */
  vendor: string;
  /** Global index of the call's local choice 0. */
  choiceOffset: number;
  choiceCount: number;
  /** Text to prepend per local choice (gateway echo), null for none. */
  echo: readonly (string | null)[] | null;
  /** Stop sequences the gateway enforces; empty when the vendor enforces them. */
  stops: readonly string[];
}

/** The shaping state of one call: `shape` maps each batch the call yields. */
export class ChoiceShaper {
  /** Every choice of the call stopped at a gateway-enforced stop sequence. */
  abandoned = false;
  /**
   * A malformed part met after others of the same batch were shaped: those are delivered first,
   * and the call fails with this on its next read, however the vendor's bytes were split.
   */
  failure: Error | null = null;
  private readonly shapeSpec: CallShape;
  private readonly matchers: StopMatcher[] | null;
  private readonly echoPending: (string | null)[] | null;
  private readonly finished = new Set<number>();

  constructor(shape: CallShape) {
    this.shapeSpec = shape;
    this.matchers = shape.stops.length > 0 ? Array.from({ length: shape.choiceCount }, () => new StopMatcher(shape.stops)) : null;
    this.echoPending = shape.echo ? [...shape.echo] : null;
  }

  /** Client-facing parts for one batch of call parts (stops early once the call is abandoned). */
  shape(batch: readonly CallPart[]): StreamPart[] {
    const out: StreamPart[] = [];
    for (const part of batch) {
      try {
        if (this.shapePart(part, out)) {
          this.abandoned = true;
          break;
        }
      } catch (error) {
        if (out.length === 0) throw error;
        this.failure = error as Error;
        break;
      }
    }
    return out;
  }

  /** Shapes one part onto `out`; true once every choice of the call hit a gateway stop. */
  private shapePart(part: CallPart, out: StreamPart[]): boolean {
    if (part.type === 'usage' || part.type === 'usage-progress') return false;
    if (part.type === 'metadata') {
      out.push(part);
      return false;
    }
    const local = part.choice;
    if (!(local >= 0 && local < this.shapeSpec.choiceCount)) {
      throw malformedUpstream(this.shapeSpec.vendor, `choice ${local} of an answer that has ${this.shapeSpec.choiceCount}`);
    }
    if (this.finished.has(local)) return false;
    const choice = this.shapeSpec.choiceOffset + local;
    const pending = this.echoPending;
    const echo = pending?.[local];
    if (pending && echo) {
      pending[local] = null;
      out.push({ type: 'text-delta', choice, text: echo });
    }
    if (part.type === 'text-delta') {
      if (!this.matchers) {
        out.push(choice === local ? part : { ...part, choice });
        return false;
      }
      const released = this.matchers[local].push(part.text);
      if (released.text) out.push({ type: 'text-delta', choice, text: released.text });
      if (!released.stopped) return false;
      this.finished.add(local);
      out.push({ type: 'finish', choice, finishReason: 'stop' });
      return this.finished.size === this.shapeSpec.choiceCount;
    }
    const rest = this.matchers?.[local].flush();
    if (rest) out.push({ type: 'text-delta', choice, text: rest });
    this.finished.add(local);
    out.push(choice === local ? part : { ...part, choice });
    return false;
  }
}
