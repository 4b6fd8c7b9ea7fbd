import { bodyErrors, GatewayError, malformedUrl } from './gateway-error.js';

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
      // SGP and OpenAI clients retry 408/409/429/5xx unless told otherwise: the error says whether a retry can help.
      headers: { 'x-should-retry': error.retryable ? 'true' : 'false', ...error.headers },
      body: { error: { message: error.message, type: error.type, param: error.param, code: error.code } },
    };
  }
  const mapped = mapFrameworkError(error as FrameworkError);
  if (mapped) return toErrorResponse(mapped);
  return {
    status: 500,
    headers: {},
    body: { error: { message: 'The gateway hit an internal error.', type: 'server_error', param: null, code: 'internal_error' } },
  };
}

/** What fastify refuses by its error code, as the gateway words it. */
const frameworkErrors = new Map<string, () => GatewayError>([
  ['FST_ERR_CTP_INVALID_MEDIA_TYPE', bodyErrors.unsupportedMediaType],
  ['FST_ERR_CTP_BODY_TOO_LARGE', bodyErrors.tooLarge],
  ['FST_ERR_CTP_EMPTY_JSON_BODY', bodyErrors.empty],
  ['FST_ERR_CTP_INVALID_CONTENT_LENGTH', bodyErrors.lengthMismatch],
  ['FST_ERR_CTP_INVALID_JSON_BODY', bodyErrors.invalidJson],
  ['FST_ERR_BAD_JSON', bodyErrors.invalidJson],
  ['FST_ERR_BAD_URL', malformedUrl],
]);

function mapFrameworkError(error: FrameworkError): GatewayError | null {
  if (!error || typeof error !== 'object') return null;
  const known = frameworkErrors.get(error.code ?? '');
  if (known) return known();
  if (error instanceof SyntaxError) return bodyErrors.invalidJson();
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    return new GatewayError(error.message ?? 'Bad request.', { status: error.statusCode, type: 'invalid_request_error', code: 'invalid_request' });
  }
  return null;
}
