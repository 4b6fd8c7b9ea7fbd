/**
 * Retries one upstream call on retryable VendorErrors (connection errors, 408, 429, 5xx, broken
 * streams) with exponential backoff and jitter, honouring the vendor's retry-after — but only while
 * the call has yielded nothing the client could have seen. Once output began, a failure is final.
 */
import { reportUpstreamRetry } from '../../observability/upstream-events.js';
import { VendorError } from '../vendor-error.js';
import { sleep } from './abort.js';
import type { CallPart } from './call-part.js';

export interface RetryOptions {
  maxRetries: number;
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
  maxRetryAfterMs: number;
}

export async function* withRetry(attempt: () => AsyncIterable<CallPart[]>, options: RetryOptions, signal: AbortSignal): AsyncGenerator<CallPart[]> {
  for (let retry = 0; ; retry++) {
    let output = false;
    try {
      for await (const batch of attempt()) {
        // usage-progress never reaches the client, so it does not close the retry window.
        if (!output && batch.some((part) => part.type !== 'usage-progress')) output = true;
        yield batch;
      }
      return;
    } catch (error) {
      if (output || signal.aborted || !(error instanceof VendorError) || !error.retryable || retry >= options.maxRetries) throw error;
      const delay = retryDelay(error, retry, options);
      if (delay === null) throw error;
      reportUpstreamRetry(error.vendor);
      await sleep(delay, signal);
    }
  }
}

/** Milliseconds to wait before retry number `retry` (0-based), or null when not worth waiting. */
export function retryDelay(error: VendorError, retry: number, options: RetryOptions): number | null {
  if (error.retryAfterSeconds != null) {
    const asked = error.retryAfterSeconds * 1000;
    return asked > options.maxRetryAfterMs ? null : asked;
  }
  const step = Math.min(options.retryMaxDelayMs, options.retryBaseDelayMs * 2 ** retry);
  // Equal jitter: at least half the step, so retries spread out without collapsing to zero.
  return step / 2 + Math.random() * (step / 2);
}
