/**
 * An upstream body as an async iterator of chunks, written by hand rather than as an async
 * generator: each read of the socket then costs one promise (the `next` call) instead of a
 * generator's suspend-and-resume on top of it, and a stream makes one such step per read of a
 * model's output (callgrind: the async machinery was the largest share of what Tollgate adds per
 * read when chunks arrive apart). Behaves as the generator it replaces did:
 *
 * - the chunks queued before a failure are handed out first, then the mapped failure is thrown;
 * - the whole-answer deadline ends at the first chunk carrying an SSE `data:` field;
 * - leaving early (`return`, as `for await` does on `break` or a throw) releases the deadline and,
 *   when the body was not read to its end, aborts the request (its socket is destroyed).
 */
import type { UpstreamResponse } from './upstream-client.js';
import type { Deadline } from './upstream-deadline.js';
import type { UpstreamExchange } from './upstream-exchange.js';

/** Maps a transport failure (or the client's abort) to what the caller should see: the UpstreamClient. */
export interface BodyFailureMapper {
  bodyFailure(response: UpstreamResponse, signal: AbortSignal, error: unknown): unknown;
}

const finished: IteratorResult<Buffer> = Object.freeze({ value: undefined, done: true });

export class UpstreamBodyChunks implements AsyncIterableIterator<Buffer> {
  private readonly response: UpstreamResponse;
  private readonly signal: AbortSignal;
  private readonly exchange: UpstreamExchange;
  private readonly deadline: Deadline | undefined;
  private readonly failures: BodyFailureMapper;
  private pending: Buffer[] = [];
  private index = 0;
  private closed = false;

  constructor(response: UpstreamResponse, signal: AbortSignal, failures: BodyFailureMapper) {
    this.response = response;
    this.signal = signal;
    this.exchange = response.body;
    this.deadline = response.deadline;
    this.failures = failures;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<Buffer>> {
    const exchange = this.exchange;
    for (;;) {
      if (this.closed) return finished;
      if (this.index < this.pending.length) {
        const chunk = this.pending[this.index++];
        const deadline = this.deadline;
        if (deadline && deadline.answerPending && chunk.includes('data:')) deadline.clear();
        return { value: chunk, done: false };
      }
      const taken = exchange.take();
      if (taken.length > 0) {
        this.pending = taken;
        this.index = 0;
        continue;
      }
      if (exchange.failure) {
        const failure = exchange.failure;
        this.close();
        throw this.failures.bodyFailure(this.response, this.signal, failure);
      }
      if (exchange.done) {
        this.close();
        return finished;
      }
      await exchange.changed();
    }
  }

  async return(): Promise<IteratorResult<Buffer>> {
    this.close();
    return finished;
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.pending = [];
    this.deadline?.release();
    // Only when the body was left unfinished: an Error captures a stack, which costs more than
    // the rest of the read on a stream that ended normally.
    if (!this.exchange.done) this.exchange.abort(new Error('the gateway stopped reading this response'));
  }
}
