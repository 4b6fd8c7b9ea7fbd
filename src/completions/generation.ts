/**
 * A run's generation: the current target's adapter stream, moving on to the alias's next target
 * while a retryable failure comes before the first output, and every batch metered before it is
 * handed out. Leaving early closes the adapter's stream, so its upstream request ends with it.
 */
import { VendorError } from '../errors/vendor-error.js';
import type { StreamPart } from '../vendors/types.js';
import type { CompletionTarget } from './completion-target.js';
import type { UsageMeter } from './usage-meter.js';

export interface GenerationSource {
  signal: AbortSignal;
  meter: UsageMeter;
  /** Forwarded upstream for tracing. */
  completionId: string;
  /** The target to call now. */
  target(): CompletionTarget;
  /** Moves to the next fallback target; false when there is none. */
  fallBack(): boolean;
}

export async function* generate(source: GenerationSource): AsyncGenerator<StreamPart[]> {
  const { signal, meter } = source;
  let iterator: AsyncIterator<StreamPart[]>;
  let result: IteratorResult<StreamPart[]>;
  for (;;) {
    const { resolved, request, plan } = source.target();
    iterator = resolved.adapter
      .stream(request, resolved.model, { signal, requestId: source.completionId, plan, reportUsage: meter.report })
      [Symbol.asyncIterator]();
    try {
      result = await iterator.next();
      break;
    } catch (error) {
      const retryable = !signal.aborted && error instanceof VendorError && error.retryable;
      if (!retryable || !source.fallBack()) throw error;
    }
  }
  try {
    while (!result.done) {
      for (const part of result.value) meter.observe(part);
      yield result.value;
      result = await iterator.next();
    }
  } finally {
    await iterator.return?.();
  }
}
