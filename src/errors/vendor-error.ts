import { GatewayError, type ErrorType, type GatewayErrorOptions } from './gateway-error.js';

export interface VendorErrorOptions extends Omit<GatewayErrorOptions, 'type' | 'headers' | 'retryable'> {
  vendor: string;
  /** Default: by status (400, 429 and 504 have their own; anything else is `upstream_error`). */
  type?: ErrorType;
  /**
   * Whether the same request can succeed later: the gateway may then retry or fall back (only
   * before output reached the client), and the client is told so in `x-should-retry`.
   */
  retryable: boolean;
  /** Whether an alias's next target may still answer when this one cannot (default: `retryable`). */
  fallback?: boolean;
  /** The HTTP status the upstream answered, when it answered. */
  upstreamStatus?: number | null;
  /** Seconds the upstream asked us to wait. */
  retryAfterSeconds?: number | null;
}

const typeByStatus: Record<number, ErrorType> = { 400: 'invalid_request_error', 429: 'rate_limit_error', 504: 'timeout_error' };

/** An upstream failure; `status` is the one the client gets. The message names the vendor and never contains a vendor key. */
export class VendorError extends GatewayError {
  readonly vendor: string;
  readonly upstreamStatus: number | null;
  readonly retryAfterSeconds: number | null;
  /** Whether an alias's next target may still answer (only before output reached the client). */
  readonly fallback: boolean;

  constructor(message: string, options: VendorErrorOptions) {
    const headers: Record<string, string> = {};
    if (options.retryAfterSeconds != null) headers['retry-after'] = String(Math.ceil(options.retryAfterSeconds));
    const { status, code, param, retryable, cause } = options;
    super(message, { status, type: options.type ?? typeByStatus[status] ?? 'upstream_error', code, param, headers, retryable, cause });
    this.name = 'VendorError';
    this.vendor = options.vendor;
    this.upstreamStatus = options.upstreamStatus ?? null;
    this.retryAfterSeconds = options.retryAfterSeconds ?? null;
    this.fallback = options.fallback ?? options.retryable;
  }
}
