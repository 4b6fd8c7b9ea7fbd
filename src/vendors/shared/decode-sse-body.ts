/**
 * Reads an upstream SSE body and runs a vendor's per-event decoding step over it, yielding one
 * batch of call parts per network read (one async step per read, whatever the number of events).
 * When a step throws mid-batch, the parts decoded before it are yielded first, so the client sees
 * exactly what it would have seen event by event.
 */
import type { CallPart } from './call-part.js';
import { SseEventReader, type SseEvent } from './sse-event-reader.js';

export interface EventDecoder {
  /** Decodes one event, pushing its parts onto `out`; throws a VendorError for an error event. */
  event(event: SseEvent, out: CallPart[]): void;
  /** After the last event: checks the stream ended properly and pushes closing parts. */
  end(out: CallPart[]): void;
}

export async function* decodeSseBody(vendor: string, chunks: AsyncIterable<Buffer>, decoder: EventDecoder): AsyncGenerator<CallPart[]> {
  const reader = new SseEventReader(vendor);
  for await (const chunk of chunks) {
    const out: CallPart[] = [];
    try {
      for (const event of reader.feed(chunk)) decoder.event(event, out);
    } catch (error) {
      if (out.length > 0) yield out;
      throw error;
    }
    if (out.length > 0) yield out;
  }
  const out: CallPart[] = [];
  try {
    for (const event of reader.end()) decoder.event(event, out);
    decoder.end(out);
  } catch (error) {
    if (out.length > 0) yield out;
    throw error;
  }
  if (out.length > 0) yield out;
}
