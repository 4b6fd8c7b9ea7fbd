/**
 * The common request body — text prompts and the usual parameters, each in range — checked by
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

const maxPrompts = 2048;

function isIntegerIn(value: unknown, min: number, max: number): boolean {
  return value == null || (typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max);
}

function isNumberIn(value: unknown, min: number, max: number): boolean {
  return value == null || (typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max);
}

function isText(value: unknown): boolean {
  return typeof value === 'string' && value.length > 0;
}

/** A non-empty string, or `min`…`max` of them. */
function isTexts(value: unknown, max: number): boolean {
  if (isText(value)) return true;
  if (!Array.isArray(value) || value.length === 0 || value.length > max) return false;
  for (const item of value) if (!isText(item)) return false;
  return true;
}

function isStreamOptions(value: unknown): boolean {
  if (value == null) return true;
  if (!isRecord(value)) return false;
  for (const key in value) if (key !== 'include_usage' || !isNullOrBoolean(value[key])) return false;
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
  ['best_of', (value) => isIntegerIn(value, 1, 20)],
  ['logprobs', (value) => isIntegerIn(value, 0, 5)],
  ['seed', (value) => isIntegerIn(value, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)],
  ['stop', (value) => value == null || isTexts(value, 4)],
  ['suffix', isNullOrString],
  ['user', (value) => value == null || (typeof value === 'string' && value.length <= 256)],
]);

export function isPlainCompletionRequest(body: unknown): boolean {
  if (!isRecord(body) || !isText(body.model) || !isTexts(body.prompt, maxPrompts)) return false;
  for (const key in body) {
    if (key === 'model' || key === 'prompt') continue;
    // logit_bias, or a key the schema refuses, goes through the schema.
    const check = parameterChecks.get(key);
    if (check === undefined || !check(body[key])) return false;
  }
  return true;
}
