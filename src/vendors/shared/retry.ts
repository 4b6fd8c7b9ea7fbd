/**
 * Retries one upstream call on retryable VendorErrors (connection errors, 408, 429, 5xx, broken
 * streams) with exponential backoff and jitter, honouring the vendor's retry-after — but only while
 * the call has yielded nothing the client could have seen. Once output began, a failure is final.
 */
import { reportUpstreamRetry } from '../../observability/upstream-events.js';
import { VendorError } from '../../errors/vendor-error.js';

export interface RetryOptions {
  maxRetries: number;
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
  maxRetryAfterMs: number;
}

/** Milliseconds to wait before retrying a call that failed with `error`, or null when the failure is final; counts the retry it allows. */
export function retryAfterFailure(error: unknown, retry: number, output: boolean, options: RetryOptions, signal: AbortSignal): number | null {
  if (output || signal.aborted || !(error instanceof VendorError) || !error.retryable || retry >= options.maxRetries) return null;
  const delay = retryDelay(error, retry, options);
  if (delay !== null) reportUpstreamRetry(error.vendor);
  return delay;
}

/** Milliseconds to wait before retry number `retry` (0-based), or null when not worth waiting. */
function retryDelay(error: VendorError, retry: number, options: RetryOptions): number | null {
  if (error.retryAfterSeconds != null) {
    const asked = error.retryAfterSeconds * 1000;
    return asked > options.maxRetryAfterMs ? null : asked;
  }
  const step = Math.min(options.retryMaxDelayMs, options.retryBaseDelayMs * 2 ** retry);
  // Equal jitter: at least half the step, so retries spread out without collapsing to zero.
  return step / 2 + Math.random() * (step / 2);
}
