/**
 * One upstream request through undici's `dispatch` API: the response arrives as callbacks into
 * this object (status and headers, then body chunks), with no per-request stream, async resource
 * or abort-signal plumbing. A consumer waits for the headers, then either for the whole body or
 * for chunks as they come; a stream consumer that falls behind pauses the socket (backpressure).
 * `abort` ends the request at any point (undici destroys the socket, never reusing it half-read).
 */
import type { Dispatcher } from 'undici';
import type { ResponseHeaders } from './upstream-client.js';

/** Unread body bytes at which the socket is paused until the consumer catches up. */
const pauseAtBytes = 256 * 1024;

export class UpstreamExchange implements Dispatcher.DispatchHandler {
  status = 0;
  headers: ResponseHeaders = {};
  /** The response finished (or failed, see `failure`). */
  done = false;
  failure: Error | null = null;
  /** Body bytes received so far. */
  received = 0;
  /** When the headers or the latest body bytes came (or the paused socket resumed), on performance.now()'s clock. */
  lastActivityAt = 0;
  private controller: Dispatcher.DispatchController | null = null;
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
    if (this.controller?.paused && !this.done) {
      this.controller.resume();
      this.lastActivityAt = performance.now();
    }
    return chunks;
  }

  /** The gateway paused the socket: its consumer has not caught up. */
  get paused(): boolean {
    return this.controller?.paused ?? false;
  }

  /** Resolves at the next data, end or failure (at once when something is already there). */
  changed(): Promise<void> {
    if (this.queue.length > 0 || this.done) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.waiter = resolve;
    });
  }

  abort(reason: Error): void {
    if (this.done) return;
    if (this.controller) this.controller.abort(reason);
    else this.pendingAbort ??= reason;
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.pendingAbort) controller.abort(this.pendingAbort);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: ResponseHeaders): void {
    if (statusCode < 200) return; // 1xx informational: the real answer follows
    this.status = statusCode;
    this.headers = headers;
    this.lastActivityAt = performance.now();
    this.settleHeaders(null);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.queue.push(chunk);
    this.queuedBytes += chunk.length;
    this.received += chunk.length;
    this.lastActivityAt = performance.now();
    if (this.queuedBytes >= pauseAtBytes && !controller.paused) controller.pause();
    this.notify();
  }

  onResponseEnd(): void {
    this.done = true;
    this.notify();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
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
