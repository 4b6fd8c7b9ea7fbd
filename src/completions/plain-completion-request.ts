/**
 * The common request body — text prompts (or none) and the usual parameters, each in range — checked by
 * hand so that most requests skip zod: its pass over the request schema was ~3.5% of the gateway's
 * CPU under load (`--cpu-prof`), the largest cost a request added before reaching the vendor.
 *
 * It accepts exactly what `completionRequestSchema` accepts, or less: anything it does not know
 * for certain (token-array prompts, `logit_bias`, an unknown key, a value out of range) goes
 * through zod, which gives the error or the parsed body. The schema has no defaults or transforms,
 * so the body it accepts is the body zod would return (property test:
 * `test/plain-completion-request.test.ts`).
 */
import { isNullOrBoolean, isNullOrString, isRecord } from '../vendors/shared/plain-values.js';
import { SEED_MAX, SEED_MIN } from './completion-request-schema.js';

const maxPrompts = 2048;

function isIntegerIn(value: unknown, min: number, max: number): boolean {
  return value == null || (typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max);
}

function isNumberIn(value: unknown, min: number, max: number): boolean {
  return value == null || (typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max);
}

/** Seeds may be any integer JSON carries within int64 (whose top arrives as the double 2^63). */
function isSeed(value: unknown): boolean {
  return value == null || (typeof value === 'number' && Number.isInteger(value) && value >= SEED_MIN && value <= SEED_MAX);
}

/** A string (empty included), or 1…`max` of them. */
function isTexts(value: unknown, max: number): boolean {
  if (typeof value === 'string') return true;
  if (!Array.isArray(value) || value.length === 0 || value.length > max) return false;
  for (const item of value) if (typeof item !== 'string') return false;
  return true;
}

function isStreamOptions(value: unknown): boolean {
  if (value == null) return true;
  if (!isRecord(value)) return false;
  for (const key in value) if ((key !== 'include_usage' && key !== 'include_obfuscation') || !isNullOrBoolean(value[key])) return false;
  return true;
}

/** Each optional parameter the check knows, with what the schema accepts for it (absent or null included). */
const parameterChecks = new Map<string, (value: unknown) => boolean>([
  ['max_tokens', (value) => isIntegerIn(value, 0, 2 ** 31 - 1)],
  ['stream', isNullOrBoolean],
  ['echo', isNullOrBoolean],
  ['stream_options', isStreamOptions],
  ['temperature', (value) => isNumberIn(value, 0, 2)],
  ['top_p', (value) => isNumberIn(value, 0, 1)],
  ['presence_penalty', (value) => isNumberIn(value, -2, 2)],
  ['frequency_penalty', (value) => isNumberIn(value, -2, 2)],
  ['n', (value) => isIntegerIn(value, 1, 128)],
  ['best_of', (value) => isIntegerIn(value, 0, 20)],
  ['logprobs', (value) => isIntegerIn(value, 0, 5)],
  ['seed', isSeed],
  ['stop', (value) => value == null || isTexts(value, 4)],
  ['suffix', isNullOrString],
  ['user', (value) => value == null || (typeof value === 'string' && value.length <= 256)],
]);

export function isPlainCompletionRequest(body: unknown): boolean {
  if (!isRecord(body) || typeof body.model !== 'string' || body.model.length === 0) return false;
  // A missing or null prompt is OpenAI's default prompt; parsing fills it in.
  if (body.prompt != null && !isTexts(body.prompt, maxPrompts)) return false;
  for (const key in body) {
    if (key === 'model' || key === 'prompt') continue;
    // logit_bias, or a key the schema refuses, goes through the schema.
    const check = parameterChecks.get(key);
    if (check === undefined || !check(body[key])) return false;
  }
  return true;
}
