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

export async function* shapeChoices(source: AsyncIterable<CallPart>, shape: CallShape): AsyncGenerator<StreamPart> {
  const matchers = shape.stops.length > 0 ? Array.from({ length: shape.choiceCount }, () => new StopMatcher(shape.stops)) : null;
  const echoPending = shape.echo ? [...shape.echo] : null;
  const finished = new Set<number>();
  let progress: Usage | null = null;
  let usageSeen = false;
  let generated = '';
  let abandoned = false;

  const echoFor = (local: number): StreamPart | null => {
    const text = echoPending?.[local];
    if (!text) return null;
    echoPending[local] = null;
    return { type: 'text-delta', choice: shape.choiceOffset + local, text };
  };

  for await (const part of source) {
    if (part.type === 'usage-progress') {
      progress = part.usage;
      continue;
    }
    if (part.type === 'usage') usageSeen = true;
    if (part.type !== 'text-delta' && part.type !== 'finish') {
      yield part;
      continue;
    }
    const local = part.choice;
    if (finished.has(local)) continue;
    const choice = shape.choiceOffset + local;
    const echo = echoFor(local);
    if (echo) yield echo;
    if (part.type === 'text-delta') {
      generated += part.text;
      if (!matchers) {
        yield { ...part, choice };
        continue;
      }
      const released = matchers[local].push(part.text);
      if (released.text) yield { type: 'text-delta', choice, text: released.text };
      if (!released.stopped) continue;
      finished.add(local);
      yield { type: 'finish', choice, finishReason: 'stop' };
      if (finished.size === shape.choiceCount) {
        abandoned = true;
        break;
      }
      continue;
    }
    const rest = matchers?.[local].flush();
    if (rest) yield { type: 'text-delta', choice, text: rest };
    finished.add(local);
    yield { ...part, choice };
  }
  if (abandoned && !usageSeen) yield { type: 'usage', usage: estimateUsage(progress, generated, shape) };
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
