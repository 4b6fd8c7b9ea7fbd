/**
 * The one mapping from upstream failures to what the client sees. Vendor 400 → 400 with the
 * vendor's message; 401/403 → 502 that never repeats the vendor's words (they can quote the key);
 * 402, or a body saying the gateway's account is out of credit, past a spend limit or without a
 * paid plan (whatever its status) → 502 upstream_quota_exhausted, final; 404 → 404
 * model_not_found; 429 → 429 with retry-after; 408, 504 and the gateway's own timeouts → 504;
 * other 5xx → 502; refused or reset connections → 502. Every message names the vendor.
 */
import { VendorError, type VendorErrorOptions } from '../../errors/vendor-error.js';

export interface UpstreamFailure {
  vendor: string;
  status: number;
  /** The vendor's own error message, already extracted from its error body (null if none). */
  message: string | null;
  /** The model as the client wrote it after the prefix, for 404 messages. */
  model: string;
  retryAfterSeconds: number | null;
  /** The variable holding the vendor key, named in credential errors so the operator knows what to fix. */
  credentialVariable: string | null;
  /** Strings that must never appear in a message (the vendor key). */
  secrets: readonly string[];
  /** The vendor's body says the gateway's account is out of credit or past a spend limit: no wait brings it back. */
  quotaExhausted?: boolean;
}

export function mapUpstreamStatus(failure: UpstreamFailure): VendorError {
  const { vendor, status } = failure;
  const detail = failure.message ? redact(shorten(failure.message), failure.secrets) : null;
  const said = detail ? `: ${detail}` : '';
  const error = (message: string, clientStatus: number, code: string, retryable: boolean, more: Partial<VendorErrorOptions> = {}) =>
    new VendorError(message, { ...more, vendor, status: clientStatus, code, retryable, upstreamStatus: status });
  const retryAfter = { retryAfterSeconds: failure.retryAfterSeconds };
  if (status === 402 || failure.quotaExhausted) {
    // Vendors send this as 429 or 400 too; retrying, here or by the client, is billed and cannot succeed.
    const why = 'no credit left, a spend limit reached or no paid plan';
    const message = `The '${vendor}' vendor refused the gateway's account on billing grounds (${why})${said}.`;
    // Another vendor (an alias's next target) bills another account.
    return error(message, 502, 'upstream_quota_exhausted', false, { fallback: true });
  }
  if (status === 401 || status === 403) {
    const fix = failure.credentialVariable ? `; check ${failure.credentialVariable}` : '';
    // Final for this vendor; an alias's next target uses other credentials.
    return error(`The '${vendor}' vendor refused the gateway's credentials (HTTP ${status})${fix}.`, 502, 'upstream_auth_failed', false, { fallback: true });
  }
  if (status === 404) {
    const message = `The model '${vendor}/${failure.model}' does not exist on the '${vendor}' vendor${detail ? ` (${vendor} said: ${detail})` : ''}.`;
    return error(message, 404, 'model_not_found', false, { type: 'invalid_request_error', param: 'model' });
  }
  if (status === 429) return error(`The '${vendor}' vendor is rate limiting the gateway${said}.`, 429, 'upstream_rate_limited', true, retryAfter);
  if (status === 408 || status === 504) return error(`The '${vendor}' vendor timed out (HTTP ${status})${said}.`, 504, 'upstream_timeout', true, retryAfter);
  const rejected = status === 400 || status === 413 || status === 422;
  if (rejected) return error(`The '${vendor}' vendor rejected the request: ${detail ?? `HTTP ${status}`}`, 400, 'upstream_invalid_request', false);
  if (status >= 500) return error(`The '${vendor}' vendor failed (HTTP ${status})${said}.`, 502, 'upstream_error', true, retryAfter);
  return error(`The '${vendor}' vendor answered HTTP ${status}${said}.`, 502, 'upstream_error', false);
}

const timeoutCodes = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

/** The vendor took too long: `what` says at which step ('connecting', 'waiting for an answer', 'waiting for more output'). */
export function upstreamTimeout(vendor: string, what: string, cause?: unknown): VendorError {
  return new VendorError(`The '${vendor}' vendor timed out (${what}).`, { vendor, status: 504, code: 'upstream_timeout', retryable: true, cause });
}

/** A failure below HTTP: no status from the vendor. Always retryable (nothing was generated). */
export function mapTransportError(vendor: string, error: unknown): VendorError {
  const code = errorCode(error);
  if (code && timeoutCodes.has(code)) {
    return upstreamTimeout(
      vendor,
      code === 'UND_ERR_CONNECT_TIMEOUT' ? 'connecting' : code === 'UND_ERR_BODY_TIMEOUT' ? 'waiting for more output' : 'waiting for an answer',
      error,
    );
  }
  const why =
    code === 'ECONNREFUSED'
      ? 'connection refused'
      : code === 'ECONNRESET' || code === 'UND_ERR_SOCKET'
        ? 'connection reset'
        : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
          ? 'host not found'
          : 'connection failed';
  return new VendorError(`The '${vendor}' vendor could not be reached (${why}).`, {
    vendor,
    status: 502,
    code: 'upstream_unreachable',
    retryable: true,
    cause: error,
  });
}

/** A response we could not understand: a broken chunk, a schema mismatch, a truncated stream. */
export function malformedUpstream(vendor: string, what: string, cause?: unknown): VendorError {
  return new VendorError(`The '${vendor}' vendor sent ${what}.`, { vendor, status: 502, code: 'upstream_malformed', retryable: true, cause });
}

/** Parses `retry-after` (seconds or HTTP date) and the `retry-after-ms` some vendors add. */
export function parseRetryAfter(headers: Record<string, string | string[] | undefined>): number | null {
  const milliseconds = first(headers['retry-after-ms']);
  if (milliseconds && Number.isFinite(Number(milliseconds))) return Math.max(0, Number(milliseconds) / 1000);
  const value = first(headers['retry-after']);
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, (date - Date.now()) / 1000);
}

function errorCode(error: unknown): string | null {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR_SOCKET') return code;
    if (code === 'UND_ERR_SOCKET') {
      const inner = (current as { cause?: { code?: unknown } }).cause?.code;
      return typeof inner === 'string' ? inner : code;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function shorten(text: string): string {
  return text.length > 500 ? `${text.slice(0, 497)}...` : text;
}

function redact(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) if (secret.length >= 4) result = result.split(secret).join('[redacted]');
  return result;
}

/** An error the vendor reported inside a 200 answer or stream (an error chunk). */
export function upstreamStreamError(vendor: string, message: string | null): VendorError {
  return new VendorError(`The '${vendor}' vendor reported an error${message ? `: ${shorten(message)}` : '.'}`, {
    vendor,
    status: 502,
    code: 'upstream_error',
    retryable: true,
  });
}
