/**
 * What ends one upstream call early, as the one signal undici is given: the client leaving (the
 * caller's signal) or the whole-answer limit passing (`responseTimeoutMs`: a non-stream call's
 * headers and body, or a stream's wait for its first event). undici's own timeouts restart with
 * every byte, so without the whole-answer limit an upstream dripping a byte at a time would never
 * end. The limit is a timer of our own rather than `AbortSignal.timeout`, which cannot be
 * cancelled: it ends early for every call.
 */
import type { VendorError } from '../../errors/vendor-error.js';
import { abortReason } from './abort.js';
import { upstreamTimeout } from './map-upstream-error.js';

/**
 * The abort signal of one upstream call, with its whole-answer limit. It is its own listener on
 * the client's signal (`handleEvent`) and its timer runs a shared function: no closure per call
 * where the timer list or the signal reach it (docs/performance.md, "Objects that outlive their request").
 */
export class CallAbort {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly client: AbortSignal;
  private readonly vendor: string;
  private failure: VendorError | null = null;

  /** @param client the caller's signal; @param answerMs the whole-answer limit */
  constructor(vendor: string, answerMs: number, client: AbortSignal) {
    this.client = client;
    this.vendor = vendor;
    this.timer = setTimeout(expire, answerMs, this);
    // The call's own socket keeps the process alive while it matters; the timer never does.
    this.timer.unref();
    if (client.aborted) this.handleEvent();
    else client.addEventListener('abort', this, { once: true });
  }

  /** The client's signal fired (EventListener object). */
  handleEvent(): void {
    this.controller.abort(abortReason(this.client));
  }

  /** The whole-answer limit passed. */
  expire(): void {
    this.failure = upstreamTimeout(this.vendor, 'waiting for an answer');
    this.controller.abort(this.failure);
  }

  /** Aborted when the client leaves or the whole-answer limit passes. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The 504 once the whole-answer limit passed; null otherwise. */
  get expired(): VendorError | null {
    return this.failure;
  }

  /** The answer came: the whole-answer limit no longer applies (the client still can end the call). */
  answered(): void {
    clearTimeout(this.timer);
  }

  /** The call is over: stop the timer and stop following the client's signal. */
  release(): void {
    clearTimeout(this.timer);
    this.client.removeEventListener('abort', this);
  }
}

function expire(abort: CallAbort): void {
  abort.expire();
}
