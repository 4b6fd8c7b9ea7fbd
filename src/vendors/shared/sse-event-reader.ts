/** Splits an upstream SSE body into events through eventsource-parser (handles any chunk boundary). */
import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import { malformedUpstream } from './map-upstream-error.js';

export interface SseEvent {
  event?: string | undefined;
  data: string;
}

// One SSE event larger than this is a broken upstream, not a completion delta.
const maxBufferSize = 8 * 1024 * 1024;

/** Feed it the body's chunks; each `feed` returns the events completed by that chunk. */
export class SseEventReader {
  private readonly vendor: string;
  // Keeps a multi-byte character split across chunks whole; about 4x cheaper per chunk than TextDecoder.
  private readonly decoder = new StringDecoder('utf8');
  private readonly parser: EventSourceParser;
  private queue: SseEvent[] = [];
  private failure: Error | null = null;

  constructor(vendor: string) {
    this.vendor = vendor;
    this.parser = createParser({
      maxBufferSize,
      // The parser's own message object (it has `event` and `data`), not a copy per event.
      onEvent: (message: EventSourceMessage) => this.queue.push(message),
      onError: (error) => {
        this.failure = error;
      },
    });
  }

  feed(chunk: Buffer): SseEvent[] {
    this.parser.feed(this.decoder.write(chunk));
    if (this.failure) throw malformedUpstream(this.vendor, 'an unreadable event stream', this.failure);
    return this.take();
  }

  /** At the end of the body: a final event without its blank line still counts (some servers end right after it). */
  end(): SseEvent[] {
    this.parser.feed(this.decoder.end());
    this.parser.feed('\n\n');
    return this.take();
  }

  private take(): SseEvent[] {
    if (this.queue.length === 0) return noEvents;
    const ready = this.queue;
    this.queue = [];
    return ready;
  }
}

const noEvents: SseEvent[] = [];
