/**
 * Turns an upstream SSE body into events through eventsource-parser (handles any chunk boundary).
 * Yields the events of each network read as one batch, so the layers above await once per read.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { malformedUpstream } from './map-upstream-error.js';

export interface SseEvent {
  event: string | undefined;
  data: string;
}

// One SSE event larger than this is a broken upstream, not a completion delta.
const maxBufferSize = 8 * 1024 * 1024;

export async function* readSseEvents(vendor: string, chunks: AsyncIterable<Buffer>): AsyncGenerator<SseEvent[]> {
  const decoder = new TextDecoder();
  let queue: SseEvent[] = [];
  let failure: Error | null = null;
  const parser = createParser({
    maxBufferSize,
    onEvent: (message: EventSourceMessage) => queue.push({ event: message.event, data: message.data }),
    onError: (error) => {
      failure = error;
    },
  });
  for await (const chunk of chunks) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    if (failure) throw malformedUpstream(vendor, 'an unreadable event stream', failure);
    if (queue.length) {
      const ready = queue;
      queue = [];
      yield ready;
    }
  }
  parser.feed(decoder.decode());
  // A final event without its blank line still counts: some servers end the body right after it.
  parser.feed('\n\n');
  if (queue.length) yield queue;
}
