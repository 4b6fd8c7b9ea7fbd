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

export async function* shapeChoices(source: AsyncIterable<CallPart[]>, shape: CallShape): AsyncGenerator<StreamPart[]> {
  const matchers = shape.stops.length > 0 ? Array.from({ length: shape.choiceCount }, () => new StopMatcher(shape.stops)) : null;
  const echoPending = shape.echo ? [...shape.echo] : null;
  const finished = new Set<number>();
  let progress: Usage | null = null;
  let usageSeen = false;
  let generated = '';
  let abandoned = false;

  const pushEcho = (local: number, out: StreamPart[]): void => {
    const text = echoPending?.[local];
    if (!text) return;
    echoPending[local] = null;
    out.push({ type: 'text-delta', choice: shape.choiceOffset + local, text });
  };

  /** Shapes one part onto `out`; true once every choice of the call hit a gateway stop. */
  const shapePart = (part: CallPart, out: StreamPart[]): boolean => {
    if (part.type === 'usage-progress') {
      progress = part.usage;
      return false;
    }
    if (part.type === 'usage') usageSeen = true;
    if (part.type !== 'text-delta' && part.type !== 'finish') {
      out.push(part);
      return false;
    }
    const local = part.choice;
    if (finished.has(local)) return false;
    const choice = shape.choiceOffset + local;
    pushEcho(local, out);
    if (part.type === 'text-delta') {
      generated += part.text;
      if (!matchers) {
        out.push(choice === local ? part : { ...part, choice });
        return false;
      }
      const released = matchers[local].push(part.text);
      if (released.text) out.push({ type: 'text-delta', choice, text: released.text });
      if (!released.stopped) return false;
      finished.add(local);
      out.push({ type: 'finish', choice, finishReason: 'stop' });
      return finished.size === shape.choiceCount;
    }
    const rest = matchers?.[local].flush();
    if (rest) out.push({ type: 'text-delta', choice, text: rest });
    finished.add(local);
    out.push(choice === local ? part : { ...part, choice });
    return false;
  };

  let last: StreamPart[] = [];
  for await (const batch of source) {
    const out: StreamPart[] = [];
    for (const part of batch) {
      if (shapePart(part, out)) {
        abandoned = true;
        break;
      }
    }
    if (abandoned) {
      // Leaving the loop ends the upstream call (its socket is destroyed) before the last batch goes out.
      last = out;
      break;
    }
    if (out.length > 0) yield out;
  }
  if (abandoned && !usageSeen) last.push({ type: 'usage', usage: estimateUsage(progress, generated, shape) });
  if (last.length > 0) yield last;
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
