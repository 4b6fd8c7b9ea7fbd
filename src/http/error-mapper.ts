import { GatewayError } from './gateway-error.js';

/** The OpenAI error wire shape. */
export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export interface ErrorResponse {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
}

interface FrameworkError {
  statusCode?: number;
  code?: string;
  message?: string;
}

/**
 * The one function that turns anything thrown into the client-facing error. Used by the HTTP
 * error handler and the SSE writer alike. Unknown errors never leak their message.
 */
export function toErrorResponse(error: unknown): ErrorResponse {
  if (error instanceof GatewayError) {
    return {
      status: error.status,
      headers: retryHeaders(error.status, error.headers),
      body: { error: { message: error.message, type: error.type, param: error.param, code: error.code } },
    };
  }
  const framework = error as FrameworkError;
  const mapped = mapFrameworkError(framework);
  if (mapped) return toErrorResponse(mapped);
  return {
    status: 500,
    headers: {},
    body: { error: { message: 'The gateway hit an internal error.', type: 'server_error', param: null, code: 'internal_error' } },
  };
}

function retryHeaders(status: number, headers: Record<string, string>): Record<string, string> {
  // SGP and OpenAI clients retry on 408/409/429/5xx; say so explicitly so client behaviour is deliberate.
  if ('x-should-retry' in headers) return headers;
  const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
  return { ...headers, 'x-should-retry': retryable ? 'true' : 'false' };
}

function mapFrameworkError(error: FrameworkError): GatewayError | null {
  if (!error || typeof error !== 'object') return null;
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new GatewayError("Unsupported content type: send 'application/json'.", {
        status: 415, type: 'invalid_request_error', code: 'unsupported_media_type',
      });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GatewayError('The request body is larger than the gateway accepts.', {
        status: 413, type: 'invalid_request_error', code: 'request_too_large',
      });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GatewayError('The request body is empty; send a JSON object.', {
        status: 400, type: 'invalid_request_error', code: 'invalid_json',
      });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new GatewayError('The Content-Length header does not match the body.', {
        status: 400, type: 'invalid_request_error', code: 'invalid_request',
      });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new GatewayError('The request body is not valid JSON.', {
        status: 400, type: 'invalid_request_error', code: 'invalid_json',
      });
    default:
      break;
  }
  if (error instanceof SyntaxError || error.code === 'FST_ERR_BAD_JSON') {
    return new GatewayError('The request body is not valid JSON.', { status: 400, type: 'invalid_request_error', code: 'invalid_json' });
  }
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    return new GatewayError(error.message ?? 'Bad request.', { status: error.statusCode, type: 'invalid_request_error', code: 'invalid_request' });
  }
  return null;
}
