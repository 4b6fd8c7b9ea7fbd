/**
 * Runs a vendor's per-event decoding step over batches of SSE events and yields one batch of call
 * parts per batch of events. When a step throws mid-batch, the parts decoded before it are yielded
 * first, so the client sees exactly what it would have seen event by event.
 */
import type { CallPart } from './call-part.js';
import type { SseEvent } from './read-sse-events.js';

export interface EventDecoder {
  /** Decodes one event, pushing its parts onto `out`; throws a VendorError for an error event. */
  event(event: SseEvent, out: CallPart[]): void;
  /** After the last event: checks the stream ended properly and pushes closing parts. */
  end(out: CallPart[]): void;
}

export async function* decodeEventBatches(batches: AsyncIterable<SseEvent[]>, decoder: EventDecoder): AsyncGenerator<CallPart[]> {
  for await (const events of batches) {
    const out: CallPart[] = [];
    try {
      for (const event of events) decoder.event(event, out);
    } catch (error) {
      if (out.length > 0) yield out;
      throw error;
    }
    if (out.length > 0) yield out;
  }
  const out: CallPart[] = [];
  decoder.end(out);
  if (out.length > 0) yield out;
}
