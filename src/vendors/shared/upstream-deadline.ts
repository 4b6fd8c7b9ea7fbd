/**
 * The time limits of one upstream exchange, kept by one native timer per request:
 *
 * - the whole answer (`answerMs`): a non-stream call's headers and body, a stream's wait for its
 *   first event, until `clear()`. Idle limits reset on every byte, so without this a slow drip
 *   would never end;
 * - silence (`idleMs`): no bytes for that long. It counts from the start for streams and from the
 *   headers for non-stream calls (vendors send those only when the answer is done), and never
 *   while the gateway itself has paused the socket because its client reads slowly.
 *
 * undici's own header and body timers are off (see upstream-client.ts): every request made it
 * allocate a fresh timer object that lived until undici's next sweep, up to a second, so under
 * load each one outlived two young-generation GCs and was promoted, and the old generation
 * filled towards a full GC. Here the timer is armed for the nearer limit; when it fires early
 * (bytes came since) it is re-armed for what is left. A call shorter than both limits costs one
 * timer, set and cleared.
 *
 * The deadline also follows `parent` (the client's signal), aborting the exchange with the
 * client's reason.
 */
import type { VendorError } from '../../errors/vendor-error.js';
import { abortReason } from './abort.js';
import { upstreamTimeout } from './map-upstream-error.js';
import type { UpstreamExchange } from './upstream-exchange.js';

export interface DeadlineLimits {
  vendor: string;
  answerMs: number;
  idleMs: number;
  /** Streams: silence counts from the start, not from the headers. */
  idleFromStart: boolean;
}

export class Deadline {
  private timer: NodeJS.Timeout | null = null;
  private failure: VendorError | null = null;
  /** When the whole answer is due, on performance.now()'s clock; Infinity once cleared. */
  private answerBy: number;
  private readonly started: number;
  private readonly limits: DeadlineLimits;
  private readonly parent: AbortSignal | null;
  private readonly exchange: UpstreamExchange;

  constructor(limits: DeadlineLimits, parent: AbortSignal | null, exchange: UpstreamExchange) {
    this.limits = limits;
    this.parent = parent;
    this.exchange = exchange;
    this.started = performance.now();
    this.answerBy = this.started + limits.answerMs;
    // The deadline itself listens (an EventListener object, no closure per call): see handleEvent.
    if (parent?.aborted) this.handleEvent();
    else parent?.addEventListener('abort', this, { once: true });
    this.arm(this.started);
  }

  /** The timer fired: end the exchange if a limit passed, or wait for what is left. */
  fire(): void {
    this.timer = null;
    if (this.exchange.done) return;
    const now = performance.now();
    if (now >= this.answerBy) return this.expire('waiting for an answer');
    const silent = this.silentFor(now);
    if (silent >= this.limits.idleMs) return this.expire(this.exchange.status === 0 ? 'waiting for an answer' : 'waiting for more output');
    this.arm(now);
  }

  /** The parent aborted: end the exchange with the client's reason. */
  handleEvent(): void {
    this.exchange.abort(toError(abortReason(this.parent!)));
  }

  get expired(): boolean {
    return this.failure !== null;
  }

  /** The whole-answer limit still runs (it ends at `clear`). */
  get answerPending(): boolean {
    return this.answerBy !== Infinity;
  }

  get error(): VendorError {
    return this.failure!;
  }

  /** Ends the whole-answer limit; silence is still watched until `release`. */
  clear(): void {
    this.answerBy = Infinity;
  }

  /** Done with the request entirely: stop the timer and detach from the parent signal. */
  release(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.parent?.removeEventListener('abort', this);
  }

  /** How long the exchange has been silent in a way that counts; 0 when silence does not count now. */
  private silentFor(now: number): number {
    const exchange = this.exchange;
    if (exchange.paused) return 0;
    if (exchange.status === 0) return this.limits.idleFromStart ? now - this.started : 0;
    return now - exchange.lastActivityAt;
  }

  private arm(now: number): void {
    const due = Math.min(this.answerBy - now, this.limits.idleMs - this.silentFor(now));
    // A shared callback with the deadline as its argument: no closure per call.
    this.timer = setTimeout(fireDeadline, Math.max(1, Math.ceil(due)), this);
    this.timer.unref();
  }

  private expire(what: string): void {
    this.failure = upstreamTimeout(this.limits.vendor, what);
    this.exchange.abort(this.failure);
  }
}

function fireDeadline(deadline: Deadline): void {
  deadline.fire();
}

function toError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}
