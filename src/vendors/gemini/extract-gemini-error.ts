import { tryParseJson } from '../shared/parse-upstream-json.js';
import type { ExtractedError } from '../shared/upstream-client.js';
import { geminiErrorBodySchema, type GeminiError } from './gemini-api.js';

export function extractGeminiError(text: string): ExtractedError {
  const error = tryParseJson(geminiErrorBodySchema, text)?.error;
  return error ? describeGeminiError(error) : { message: null };
}

/**
 * Gemini answers an invalid key with 400 INVALID_ARGUMENT / API_KEY_INVALID: that is the gateway's
 * credential problem, not the client's request, so it is reported as 401 (→ 502). RetryInfo's
 * retryDelay ("37s") stands in for a missing retry-after header.
 */
export function describeGeminiError(error: GeminiError): ExtractedError {
  const details = error.details ?? [];
  const keyInvalid = details.some((detail) => detail.reason === 'API_KEY_INVALID');
  const delay = details.find((detail) => detail.retryDelay)?.retryDelay;
  const seconds = delay ? Number.parseFloat(delay) : Number.NaN;
  return {
    message: error.message ?? error.status ?? null,
    ...(keyInvalid ? { status: 401 } : {}),
    ...(Number.isFinite(seconds) ? { retryAfterSeconds: seconds } : {}),
  };
}
