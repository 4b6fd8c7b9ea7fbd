/**
 * One upstream request through undici's `dispatch` API: the response arrives as callbacks into
 * this object (status and headers, then body chunks), with no per-request stream, async resource
 * or abort-signal plumbing. A consumer waits for the headers, then either for the whole body or
 * for chunks as they come; a stream consumer that falls behind pauses the socket (backpressure).
 * `abort` ends the request at any point (undici destroys the socket, never reusing it half-read).
 *
 * The callbacks are undici's first handler interface (onConnect, onHeaders, onData, onComplete,
 * onError), which its types mark deprecated but its clients still run on: a handler of the newer
 * interface (onResponseStart…) is wrapped in an adapter that, for every response, builds a
 * controller and turns the raw header list into an object. Skipping that adapter saved 2.4% of
 * a stream's instructions and 3.0% of a non-stream request's (README, session 21). undici is
 * pinned; its major upgrade must recheck this interface (test/faults-upstream.test.ts and
 * test/abuse-clients.test.ts cover pause, resume, abort and error answers).
 */
import { util, type Dispatcher } from 'undici';
import type { ResponseHeaders } from './upstream-client.js';

/** Unread body bytes at which the socket is paused until the consumer catches up. */
const pauseAtBytes = 256 * 1024;
const noHeaders: ResponseHeaders = Object.freeze({});

export class UpstreamExchange implements Dispatcher.DispatchHandler {
  status = 0;
  /**
   * The response's headers by lower-case name, for error answers only (their retry hints): a
   * successful answer's headers are never read, and turning undici's raw list into an object was
   * ~2.5% of a stream's instructions.
   */
  headers: ResponseHeaders = noHeaders;
  /** The response finished (or failed, see `failure`). */
  done = false;
  failure: Error | null = null;
  /** Body bytes received so far. */
  received = 0;
  /** When the headers or the latest body bytes came (or the paused socket resumed), on performance.now()'s clock. */
  lastActivityAt = 0;
  private abortRequest: ((reason?: Error) => void) | null = null;
  private aborted = false;
  private resumeSocket: (() => void) | null = null;
  private socketPaused = false;
  private pendingAbort: Error | null = null;
  private headersSettled = false;
  // The waiting promise's own functions, kept as they are: wrapping them in a closure made inside
  // the executor kept every request reachable through young-generation GCs (README, "Objects that
  // outlive their request").
  private headersResolve: (() => void) | null = null;
  private headersReject: ((error: Error) => void) | null = null;
  private queue: Buffer[] = [];
  private queuedBytes = 0;
  /** Called on every change (data, end, failure); a consumer sets it while it waits. */
  private waiter: (() => void) | null = null;

  /** Resolves once the status and headers arrived; rejects with the transport error. */
  headersArrived(): Promise<void> {
    if (this.headersSettled) return this.failure && this.status === 0 ? Promise.reject(this.failure) : Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.headersResolve = resolve;
      this.headersReject = reject;
    });
  }

  /** Takes the chunks received so far (empties the queue, resumes a paused socket). */
  take(): Buffer[] {
    const chunks = this.queue;
    this.queue = [];
    this.queuedBytes = 0;
    if (this.socketPaused && !this.done) {
      this.socketPaused = false;
      this.resumeSocket?.();
      this.lastActivityAt = performance.now();
    }
    return chunks;
  }

  /** The gateway paused the socket: its consumer has not caught up. */
  get paused(): boolean {
    return this.socketPaused;
  }

  /** Resolves at the next data, end or failure (at once when something is already there). */
  changed(): Promise<void> {
    if (this.queue.length > 0 || this.done) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.waiter = resolve;
    });
  }

  abort(reason: Error): void {
    if (this.done || this.aborted) return;
    if (this.abortRequest) {
      this.aborted = true;
      this.abortRequest(reason);
    } else this.pendingAbort ??= reason;
  }

  onConnect(abort: (reason?: Error) => void): void {
    this.abortRequest = abort;
    if (this.pendingAbort && !this.aborted) {
      this.aborted = true;
      abort(this.pendingAbort);
    }
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (statusCode < 200) return true; // 1xx informational: the real answer follows
    this.status = statusCode;
    if (statusCode >= 300) this.headers = util.parseHeaders(rawHeaders) as ResponseHeaders;
    this.resumeSocket = resume;
    this.lastActivityAt = performance.now();
    this.settleHeaders(null);
    return true;
  }

  /** Returning false pauses the socket until `take` resumes it. */
  onData(chunk: Buffer): boolean {
    this.queue.push(chunk);
    this.queuedBytes += chunk.length;
    this.received += chunk.length;
    this.lastActivityAt = performance.now();
    if (this.queuedBytes >= pauseAtBytes) this.socketPaused = true;
    this.notify();
    return !this.socketPaused;
  }

  onComplete(): void {
    this.done = true;
    this.notify();
  }

  onError(error: Error): void {
    if (this.done) return;
    this.done = true;
    this.failure = error;
    this.settleHeaders(error);
    this.notify();
  }

  private settleHeaders(error: Error | null): void {
    if (this.headersSettled) return;
    this.headersSettled = true;
    const resolve = this.headersResolve;
    const reject = this.headersReject;
    this.headersResolve = null;
    this.headersReject = null;
    if (error) reject?.(error);
    else resolve?.();
  }

  private notify(): void {
    const waiter = this.waiter;
    if (waiter) {
      this.waiter = null;
      waiter();
    }
  }
}
