/**
 * The one error hierarchy. Everything the gateway reports to a client is a GatewayError
 * (or becomes one in `toErrorResponse`). Vendor failures are VendorError, a subclass.
 */
export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'insufficient_quota'
  | 'upstream_error'
  | 'timeout_error'
  | 'service_unavailable'
  | 'server_error';

export interface GatewayErrorOptions {
  status: number;
  type: ErrorType;
  code?: string | null;
  param?: string | null;
  /** Extra response headers, for example `retry-after`. */
  headers?: Record<string, string>;
  /** Whether the same request can succeed if sent again later (`x-should-retry`); default: what SDKs retry on their own (408, 409, 429, 5xx). */
  retryable?: boolean;
  cause?: unknown;
}

export class GatewayError extends Error {
  readonly status: number;
  readonly type: ErrorType;
  readonly code: string | null;
  readonly param: string | null;
  readonly headers: Record<string, string>;
  /** Whether the same request can succeed if sent again later; the client is told in `x-should-retry`. */
  readonly retryable: boolean;

  constructor(message: string, options: GatewayErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.status = options.status;
    this.type = options.type;
    this.code = options.code ?? null;
    this.param = options.param ?? null;
    this.headers = options.headers ?? {};
    const status = options.status;
    this.retryable = options.retryable ?? (status === 408 || status === 409 || status === 429 || status >= 500);
  }
}

export function invalidRequest(message: string, param: string | null, code = 'invalid_value'): GatewayError {
  return new GatewayError(message, { status: 400, type: 'invalid_request_error', param, code });
}

export function unsupportedParameter(param: string, vendor: string, detail?: string): GatewayError {
  const why = detail ? `: ${detail}` : '';
  return new GatewayError(`The '${vendor}' vendor cannot honour '${param}'${why}.`, {
    status: 400,
    type: 'invalid_request_error',
    param,
    code: 'unsupported_parameter',
  });
}

export function modelNotFound(message: string): GatewayError {
  return new GatewayError(message, { status: 404, type: 'invalid_request_error', param: 'model', code: 'model_not_found' });
}

/** A 503 the client may retry after a second. */
export function serviceUnavailable(message: string, code: string, cause?: unknown): GatewayError {
  return new GatewayError(message, { status: 503, type: 'service_unavailable', code, cause, headers: { 'retry-after': '1' } });
}

/** Storage could not be reached: the request cannot be authenticated or metered, so it is refused. */
export function storageUnavailable(cause: unknown): GatewayError {
  return serviceUnavailable('The gateway cannot reach its database right now; retry shortly.', 'storage_unavailable', cause);
}

/** An account name is unique: creating a second one of the same name is a 409. */
export function accountExists(name: string): GatewayError {
  return new GatewayError(`an account named '${name}' already exists`, { status: 409, type: 'invalid_request_error', code: 'account_exists', param: 'name' });
}

/** Errors of the `Idempotency-Key` request header. */
export const idempotencyErrors = {
  invalidKey: () =>
    new GatewayError('The Idempotency-Key header must be 1 to 255 printable ASCII characters.', {
      status: 400,
      type: 'invalid_request_error',
      code: 'invalid_idempotency_key',
    }),
  /** 422, as the IETF idempotency-key draft asks: the request is well formed but contradicts the key's first use; retrying it cannot help. */
  reused: () =>
    new GatewayError('This Idempotency-Key was already used with a different request body; use a new key for a new request.', {
      status: 422,
      type: 'invalid_request_error',
      code: 'idempotency_key_reused',
      retryable: false,
    }),
  inUse: () =>
    new GatewayError('A request with this Idempotency-Key is still running; retry once it has finished.', {
      status: 409,
      type: 'invalid_request_error',
      code: 'idempotency_key_in_use',
      headers: { 'retry-after': '1' },
    }),
  tooDeep: () => badBody('The request body is nested too deeply to be compared for its Idempotency-Key.', 'invalid_request'),
};

/** A path or query with a `%` that does not start a valid percent-escape. */
export function malformedUrl(): GatewayError {
  return new GatewayError("The request URL is malformed: every '%' must start a percent-escape such as '%20'.", {
    status: 400,
    type: 'invalid_request_error',
    code: 'invalid_url',
  });
}

/** A request body the gateway cannot read (400, or the `status` given). */
function badBody(message: string, code: string, status = 400, cause?: unknown): GatewayError {
  return new GatewayError(message, { status, type: 'invalid_request_error', code, cause });
}

/** Why a request body could not be read as JSON (the same errors whichever layer read it). */
export const bodyErrors = {
  unsupportedMediaType: () => badBody("Unsupported content type: send the body as JSON with 'Content-Type: application/json'.", 'unsupported_media_type', 415),
  unsupportedEncoding: (encoding: string) =>
    badBody(`Unsupported Content-Encoding '${encoding}': send the body as gzip, deflate or identity.`, 'unsupported_content_encoding', 415),
  /** The body claims an encoding its bytes do not follow (a broken gzip stream). */
  undecodable: (encoding: string, cause: Error) => badBody(`The request body is not valid ${encoding} data.`, 'invalid_content_encoding', 400, cause),
  tooLarge: () => badBody('The request body is larger than the gateway accepts.', 'request_too_large', 413),
  empty: () => badBody('The request body is empty; send a JSON object.', 'invalid_json'),
  lengthMismatch: () => badBody('The Content-Length header does not match the body.', 'invalid_request'),
  invalidJson: () => badBody('The request body is not valid JSON.', 'invalid_json'),
  /** The client went away (or broke the stream) mid-body. */
  unreadable: (cause: Error) => badBody(`The request body could not be read: ${cause.message}.`, 'invalid_request', 400, cause),
};
