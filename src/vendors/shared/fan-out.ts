/**
 * Runs several independent upstream calls concurrently (at most `concurrency` at once) and merges
 * their parts as they arrive. Each call already yields global choice indexes. When one call fails,
 * or the consumer stops, the others are aborted and awaited so no request or socket outlives us.
 */
import type { StreamPart } from '../types.js';

export type CallSource = (signal: AbortSignal) => AsyncIterable<StreamPart[]>;

interface Running {
  iterator: AsyncIterator<StreamPart[]>;
  pending: Promise<Settled>;
}

type Settled = { index: number; result: IteratorResult<StreamPart[]> } | { index: number; error: unknown };

/** Merges the calls' batches; one call is returned as it is (no extra generator layer). */
export function fanOut(sources: readonly CallSource[], signal: AbortSignal, concurrency: number): AsyncIterable<StreamPart[]> {
  if (sources.length === 1) return sources[0](signal);
  return merge(sources, signal, concurrency);
}

async function* merge(sources: readonly CallSource[], signal: AbortSignal, concurrency: number): AsyncGenerator<StreamPart[]> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal.reason);
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  const running = new Map<number, Running>();
  let next = 0;
  const pull = (index: number, iterator: AsyncIterator<StreamPart[]>): Promise<Settled> =>
    iterator.next().then(
      (result) => ({ index, result }),
      (error: unknown) => ({ index, error }),
    );
  const start = () => {
    const index = next++;
    const iterator = sources[index](controller.signal)[Symbol.asyncIterator]();
    running.set(index, { iterator, pending: pull(index, iterator) });
  };
  try {
    while (running.size < concurrency && next < sources.length) start();
    while (running.size > 0) {
      const settled = await Promise.race([...running.values()].map((call) => call.pending));
      const call = running.get(settled.index);
      if (!call) throw new Error(`upstream call ${settled.index} settled but is not running`);
      if ('error' in settled) {
        running.delete(settled.index);
        throw settled.error;
      }
      if (settled.result.done) {
        running.delete(settled.index);
        if (next < sources.length) start();
        continue;
      }
      call.pending = pull(settled.index, call.iterator);
      yield settled.result.value;
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    if (running.size > 0) {
      controller.abort(signal.aborted ? signal.reason : new DOMException('A sibling upstream call ended the request.', 'AbortError'));
      const calls = [...running.values()];
      await Promise.allSettled(calls.map((call) => call.pending));
      await Promise.allSettled(calls.map((call) => call.iterator.return?.()));
    }
  }
}
