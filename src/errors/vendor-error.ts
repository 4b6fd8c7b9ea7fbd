import { GatewayError, type ErrorType } from './gateway-error.js';

export interface VendorErrorOptions {
  vendor: string;
  /** The status the client should get (see the mapping in the vendors issue: 401/403 → 502 etc.). */
  status: number;
  type?: ErrorType;
  code?: string | null;
  param?: string | null;
  /**
   * Whether the same request can succeed later: the gateway may then retry or fall back (only
   * before output reached the client), and the client is told so in `x-should-retry`.
   */
  retryable: boolean;
  /** The HTTP status the upstream answered, when it answered. */
  upstreamStatus?: number | null;
  /** Seconds the upstream asked us to wait. */
  retryAfterSeconds?: number | null;
  cause?: unknown;
}

/** An upstream failure. The message names the vendor and never contains a vendor key. */
export class VendorError extends GatewayError {
  readonly vendor: string;
  readonly upstreamStatus: number | null;
  readonly retryAfterSeconds: number | null;

  constructor(message: string, options: VendorErrorOptions) {
    const headers: Record<string, string> = {};
    if (options.retryAfterSeconds != null) headers['retry-after'] = String(Math.ceil(options.retryAfterSeconds));
    super(message, {
      status: options.status,
      type:
        options.type ??
        (options.status === 504
          ? 'timeout_error'
          : options.status === 429
            ? 'rate_limit_error'
            : options.status === 400
              ? 'invalid_request_error'
              : 'upstream_error'),
      code: options.code ?? null,
      param: options.param ?? null,
      headers,
      retryable: options.retryable,
      cause: options.cause,
    });
    this.name = 'VendorError';
    this.vendor = options.vendor;
    this.upstreamStatus = options.upstreamStatus ?? null;
    this.retryAfterSeconds = options.retryAfterSeconds ?? null;
  }
}
