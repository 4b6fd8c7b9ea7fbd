/**
 * Reads an upstream SSE body and runs a vendor's per-event decoding step over it, yielding one
 * batch of call parts per network read (one async step per read, whatever the number of events).
 * When a step throws mid-batch, the parts decoded before it are yielded first, so the client sees
 * exactly what it would have seen event by event.
 *
 * An iterator written by hand rather than an async generator: a stream takes one step through it
 * per read of the model's output, and a generator's suspend-and-resume cost more than the step's
 * own work (see upstream-body-chunks.ts). Leaving early (`return`) or a failure closes the body.
 */
import type { CallPart } from './call-part.js';
import { SseEventReader, type SseEvent } from './sse-event-reader.js';

export interface EventDecoder {
  /** Decodes one event, pushing its parts onto `out`; throws a VendorError for an error event. */
  event(event: SseEvent, out: CallPart[]): void;
  /** After the last event: checks the stream ended properly and pushes closing parts. */
  end(out: CallPart[]): void;
}

export function decodeSseBody(vendor: string, chunks: AsyncIterable<Buffer>, decoder: EventDecoder): AsyncIterableIterator<CallPart[]> {
  return new SseBodyDecoder(new SseEventReader(vendor), chunks[Symbol.asyncIterator](), decoder);
}

const finished: IteratorResult<CallPart[]> = Object.freeze({ value: undefined, done: true });

class SseBodyDecoder implements AsyncIterableIterator<CallPart[]> {
  private readonly reader: SseEventReader;
  private readonly source: AsyncIterator<Buffer>;
  private readonly decoder: EventDecoder;
  /** No more batches: the body ended, failed, or the consumer left. */
  private closed = false;
  /** A decoding failure to throw at the next call, after the parts decoded before it went out. */
  private deferred: { error: unknown } | null = null;

  constructor(reader: SseEventReader, source: AsyncIterator<Buffer>, decoder: EventDecoder) {
    this.reader = reader;
    this.source = source;
    this.decoder = decoder;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<CallPart[]>> {
    const deferred = this.deferred;
    if (deferred) {
      this.deferred = null;
      await this.closeSource();
      throw deferred.error;
    }
    while (!this.closed) {
      let result: IteratorResult<Buffer>;
      try {
        result = await this.source.next();
      } catch (error) {
        this.closed = true; // the body's own failure: it has already closed itself
        throw error;
      }
      const out: CallPart[] = [];
      try {
        if (result.done) {
          this.closed = true;
          for (const event of this.reader.end()) this.decoder.event(event, out);
          this.decoder.end(out);
        } else {
          for (const event of this.reader.feed(result.value)) this.decoder.event(event, out);
        }
      } catch (error) {
        this.closed = true;
        if (out.length > 0) {
          this.deferred = { error };
          return { value: out, done: false };
        }
        await this.closeSource();
        throw error;
      }
      if (out.length > 0) return { value: out, done: false };
    }
    return finished;
  }

  async return(): Promise<IteratorResult<CallPart[]>> {
    this.deferred = null;
    this.closed = true;
    await this.closeSource();
    return finished;
  }

  private async closeSource(): Promise<void> {
    await this.source.return?.();
  }
}
