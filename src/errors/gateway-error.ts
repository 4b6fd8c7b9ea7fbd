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
  cause?: unknown;
}

export class GatewayError extends Error {
  readonly status: number;
  readonly type: ErrorType;
  readonly code: string | null;
  readonly param: string | null;
  readonly headers: Record<string, string>;

  constructor(message: string, options: GatewayErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.status = options.status;
    this.type = options.type;
    this.code = options.code ?? null;
    this.param = options.param ?? null;
    this.headers = options.headers ?? {};
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

/** Storage could not be reached: the request cannot be authenticated or metered, so it is refused. */
export function storageUnavailable(cause: unknown): GatewayError {
  return new GatewayError('The gateway cannot reach its database right now; retry shortly.', {
    status: 503, type: 'service_unavailable', code: 'storage_unavailable', cause, headers: { 'retry-after': '1' },
  });
}

/** Why a request body could not be read as JSON (the same errors whichever layer read it). */
export const bodyErrors = {
  unsupportedMediaType: () => new GatewayError("Unsupported content type: send 'application/json'.", {
    status: 415, type: 'invalid_request_error', code: 'unsupported_media_type',
  }),
  tooLarge: () => new GatewayError('The request body is larger than the gateway accepts.', {
    status: 413, type: 'invalid_request_error', code: 'request_too_large',
  }),
  empty: () => new GatewayError('The request body is empty; send a JSON object.', {
    status: 400, type: 'invalid_request_error', code: 'invalid_json',
  }),
  lengthMismatch: () => new GatewayError('The Content-Length header does not match the body.', {
    status: 400, type: 'invalid_request_error', code: 'invalid_request',
  }),
  invalidJson: () => new GatewayError('The request body is not valid JSON.', {
    status: 400, type: 'invalid_request_error', code: 'invalid_json',
  }),
  /** The client went away (or broke the stream) mid-body. */
  unreadable: (cause: Error) => new GatewayError(`The request body could not be read: ${cause.message}.`, {
    status: 400, type: 'invalid_request_error', code: 'invalid_request', cause,
  }),
};
