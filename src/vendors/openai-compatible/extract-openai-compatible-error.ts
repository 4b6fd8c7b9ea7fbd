import type { ExtractedError } from '../shared/upstream-client.js';
import { tryParseJson } from '../shared/parse-upstream-json.js';
import { openaiErrorBodySchema } from './openai-compatible-api.js';

/** The message of an error body in any of the shapes OpenAI-compatible servers use; else its first 300 characters. */
export function extractOpenAICompatibleError(text: string): ExtractedError {
  const body = tryParseJson(openaiErrorBodySchema, text);
  if (!body) return { message: text.trim() ? text.trim().slice(0, 300) : null };
  const error = body.error;
  const message = typeof error === 'string' ? error : (error?.message ?? body.message ?? (typeof body.detail === 'string' ? body.detail : null));
  return { message: message ?? null };
}
