/**
 * Reads an upstream SSE body with eventsource-parser and runs a vendor's per-event decoding step
 * over it, yielding one batch of call parts per network read (every layer above then takes one
 * step per read, whatever the number of events in it). When a step throws mid-batch, or the
 * stream breaks mid-batch, the parts decoded before it are yielded first, so the client sees
 * exactly what it would have seen event by event. Leaving early or failing closes the body, which
 * ends the upstream request.
 */
import { createParser, ParseError, type EventSourceMessage } from 'eventsource-parser';
import type { CallPart } from './call-part.js';
import { malformedUpstream } from './map-upstream-error.js';

/** A vendor's per-event step, with its check at the end of the stream. */
export interface EventDecoder {
  /** Decodes one event, pushing its parts onto `out`; throws a VendorError for an error event. */
  event(event: EventSourceMessage, out: CallPart[]): void;
  /** After the last event: checks the stream ended properly and pushes closing parts. */
  end(out: CallPart[]): void;
}

// One SSE event larger than this is a broken upstream, not a completion delta.
const maxEventSize = 8 * 1024 * 1024;

export async function* decodeSseBody(vendor: string, body: AsyncIterable<Buffer>, decoder: EventDecoder): AsyncGenerator<CallPart[]> {
  // Events and parse errors in the order the parser met them.
  const queue: (EventSourceMessage | ParseError)[] = [];
  const parser = createParser({ maxBufferSize: maxEventSize, onEvent: (event) => queue.push(event), onError: (error) => queue.push(error) });
  // Keeps a multi-byte character split across two reads whole.
  const text = new TextDecoder();
  for await (const chunk of body) {
    parser.feed(text.decode(chunk, { stream: true }));
    const out: CallPart[] = [];
    const failure = decodeQueue(vendor, queue, decoder, out);
    if (out.length > 0) yield out;
    if (failure) throw failure.error;
  }
  // A final event without its blank line still counts: some servers end right after it.
  parser.feed(`${text.decode()}\n\n`);
  const out: CallPart[] = [];
  const failure = decodeQueue(vendor, queue, decoder, out) ?? ending(decoder, out);
  if (out.length > 0) yield out;
  if (failure) throw failure.error;
}

/** Decodes and empties the queue; returns what stopped it (the parts before it are in `out`), or null. */
function decodeQueue(vendor: string, queue: (EventSourceMessage | ParseError)[], decoder: EventDecoder, out: CallPart[]): { error: unknown } | null {
  try {
    for (const item of queue) {
      if (item instanceof ParseError) throw malformedUpstream(vendor, 'an unreadable event stream', item);
      decoder.event(item, out);
    }
    return null;
  } catch (error) {
    return { error };
  } finally {
    queue.length = 0;
  }
}

function ending(decoder: EventDecoder, out: CallPart[]): { error: unknown } | null {
  try {
    decoder.end(out);
    return null;
  } catch (error) {
    return { error };
  }
}
