/**
 * Turns one upstream call's parts into client-facing parts: local → global choice indexes, the
 * echoed prompt prepended (lazily, right before the choice's first output, so an upstream failure
 * before output is still an HTTP error), and gateway-enforced stop sequences (StopMatcher, across
 * chunk boundaries). Once every choice of the call hit a stop, the upstream call is abandoned —
 * ending iteration destroys its socket — and metered from what the vendor reported plus an estimate.
 */
import type { StreamPart, Usage } from '../types.js';
import type { CallPart } from './call-part.js';
import { StopMatcher } from './stop-matcher.js';

export interface CallShape {
  /** Global index of the call's local choice 0. */
  choiceOffset: number;
  choiceCount: number;
  /** Text to prepend per local choice (gateway echo), null for none. */
  echo: readonly (string | null)[] | null;
  /** Stop sequences the gateway enforces; empty when the vendor enforces them. */
  stops: readonly string[];
  /** The prompt, to estimate prompt tokens if the call is abandoned before the vendor reported them. */
  promptText: string;
  countTokens(text: string): number;
}

/**
 * The shaping state of one call. `shape` maps each batch the call yields; once `abandoned` is set
 * (every choice hit a gateway stop), the caller stops reading the call and sends `closing()` last.
 */
export class ChoiceShaper {
  /** Every choice of the call stopped at a gateway-enforced stop sequence. */
  abandoned = false;
  private readonly shapeSpec: CallShape;
  private readonly matchers: StopMatcher[] | null;
  private readonly echoPending: (string | null)[] | null;
  private readonly finished = new Set<number>();
  private progress: Usage | null = null;
  private usageSeen = false;
  private generated = '';

  constructor(shape: CallShape) {
    this.shapeSpec = shape;
    this.matchers = shape.stops.length > 0 ? Array.from({ length: shape.choiceCount }, () => new StopMatcher(shape.stops)) : null;
    this.echoPending = shape.echo ? [...shape.echo] : null;
  }

  /** Client-facing parts for one batch of call parts (stops early once the call is abandoned). */
  shape(batch: readonly CallPart[]): StreamPart[] {
    const out: StreamPart[] = [];
    for (const part of batch) {
      if (this.shapePart(part, out)) {
        this.abandoned = true;
        break;
      }
    }
    return out;
  }

  /** After abandoning: the usage estimate when the vendor reported none. */
  closing(): StreamPart[] {
    if (!this.abandoned || this.usageSeen) return [];
    return [{ type: 'usage', usage: estimateUsage(this.progress, this.generated, this.shapeSpec) }];
  }

  /** Shapes one part onto `out`; true once every choice of the call hit a gateway stop. */
  private shapePart(part: CallPart, out: StreamPart[]): boolean {
    if (part.type === 'usage-progress') {
      this.progress = part.usage;
      return false;
    }
    if (part.type === 'usage') this.usageSeen = true;
    if (part.type !== 'text-delta' && part.type !== 'finish') {
      out.push(part);
      return false;
    }
    const local = part.choice;
    if (this.finished.has(local)) return false;
    const choice = this.shapeSpec.choiceOffset + local;
    const echo = this.echoPending?.[local];
    if (echo) {
      this.echoPending![local] = null;
      out.push({ type: 'text-delta', choice, text: echo });
    }
    if (part.type === 'text-delta') {
      if (!this.matchers) {
        out.push(choice === local ? part : { ...part, choice });
        return false;
      }
      // Only a call with gateway stops can be abandoned and need this estimate (`closing`).
      this.generated += part.text;
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

/** The vendor's own counts where it gave them, the shared tokenizer's estimate for the rest. */
function estimateUsage(progress: Usage | null, generated: string, shape: CallShape): Usage {
  const estimatedCompletion = shape.countTokens(generated);
  return {
    promptTokens: progress?.promptTokens ?? shape.countTokens(shape.promptText),
    completionTokens: Math.max(progress?.completionTokens ?? 0, estimatedCompletion),
    cachedTokens: progress?.cachedTokens ?? null,
    reasoningTokens: progress?.reasoningTokens ?? null,
    estimated: true,
  };
}
