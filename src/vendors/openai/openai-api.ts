/**
 * A limited, tolerant version of the OpenAI wire schemas: only the fields the gateway reads,
 * optional fields nullable, unknown fields ignored. OpenAI-compatible servers share these.
 */
import { z } from 'zod';

const count = z.number().int().nonnegative();

export const openaiUsageSchema = z.object({
  prompt_tokens: count.nullish(),
  completion_tokens: count.nullish(),
  prompt_tokens_details: z
    .object({ cached_tokens: count.nullish(), audio_tokens: count.nullish() })
    .nullish(),
  completion_tokens_details: z
    .object({
      reasoning_tokens: count.nullish(),
      audio_tokens: count.nullish(),
      accepted_prediction_tokens: count.nullish(),
      rejected_prediction_tokens: count.nullish(),
    })
    .nullish(),
  /** DeepSeek reports its prompt cache this way. */
  prompt_cache_hit_tokens: count.nullish(),
});

export type OpenAIUsage = z.infer<typeof openaiUsageSchema>;

export const openaiLogprobsSchema = z.object({
  tokens: z.array(z.string()).nullish(),
  token_logprobs: z.array(z.number().nullable()).nullish(),
  top_logprobs: z.array(z.record(z.string(), z.number()).nullable()).nullish(),
});

export type OpenAILogprobs = z.infer<typeof openaiLogprobsSchema>;

const streamErrorSchema = z.object({ message: z.string().nullish(), type: z.string().nullish(), code: z.unknown().optional() }).nullish();

export const openaiCompletionSchema = z.object({
  system_fingerprint: z.string().nullish(),
  choices: z
    .array(
      z.object({
        index: z.number().int().nonnegative().nullish(),
        text: z.string().nullish(),
        logprobs: openaiLogprobsSchema.nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: openaiUsageSchema.nullish(),
  error: streamErrorSchema,
});

export type OpenAICompletion = z.infer<typeof openaiCompletionSchema>;

// Safe integers, as zod 4's `.int()` requires.
const isNonNegativeInteger = (value: unknown) => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
const isCount = (value: unknown) => value == null || isNonNegativeInteger(value);

/** An object whose listed fields are all absent, null or non-negative integers (others are ignored, as zod does). */
function hasCounts(value: unknown, fields: readonly string[]): boolean {
  if (value == null) return true;
  if (typeof value !== 'object' || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  for (const field of fields) if (!isCount(record[field])) return false;
  return true;
}

const usageCounts = ['prompt_tokens', 'completion_tokens', 'prompt_cache_hit_tokens'] as const;
const promptDetailCounts = ['cached_tokens', 'audio_tokens'] as const;
const completionDetailCounts = ['reasoning_tokens', 'audio_tokens', 'accepted_prediction_tokens', 'rejected_prediction_tokens'] as const;

/** Exactly what `openaiUsageSchema.nullish()` accepts, checked by hand. */
export function isPlainUsage(raw: unknown): boolean {
  if (raw == null) return true;
  if (!hasCounts(raw, usageCounts)) return false;
  const usage = raw as Record<string, unknown>;
  return hasCounts(usage.prompt_tokens_details, promptDetailCounts) && hasCounts(usage.completion_tokens_details, completionDetailCounts);
}

/**
 * The common completion body or stream chunk — text choices without logprobs, no error, usage
 * optional — checked by hand so the hot path skips zod. Anything else (or any doubt) goes through
 * `openaiCompletionSchema`.
 */
export function isPlainCompletion(raw: unknown): boolean {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return false;
  const chunk = raw as Record<string, unknown>;
  if (chunk.error != null || !isPlainUsage(chunk.usage)) return false;
  if (chunk.system_fingerprint != null && typeof chunk.system_fingerprint !== 'string') return false;
  const choices = chunk.choices;
  if (!Array.isArray(choices)) return false;
  for (const choice of choices) {
    if (typeof choice !== 'object' || choice === null || Array.isArray(choice)) return false;
    const { index, text, logprobs, finish_reason: finish } = choice as Record<string, unknown>;
    if (index != null && !isNonNegativeInteger(index)) return false;
    if (text != null && typeof text !== 'string') return false;
    if (logprobs != null) return false;
    if (finish != null && typeof finish !== 'string') return false;
  }
  return true;
}

export const openaiChatSchema = z.object({
  system_fingerprint: z.string().nullish(),
  choices: z
    .array(
      z.object({
        index: z.number().int().nonnegative().nullish(),
        message: z.object({ content: z.string().nullish() }).nullish(),
        delta: z.object({ content: z.string().nullish() }).nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: openaiUsageSchema.nullish(),
  /** Groq reports stream usage here. */
  x_groq: z.object({ usage: openaiUsageSchema.nullish() }).nullish(),
  error: streamErrorSchema,
});

export type OpenAIChat = z.infer<typeof openaiChatSchema>;

/** A chat `message` or `delta`: absent, or an object whose `content` is absent, null or a string. */
function isPlainContent(value: unknown): boolean {
  if (value == null) return true;
  if (typeof value !== 'object' || Array.isArray(value)) return false;
  const content = (value as Record<string, unknown>).content;
  return content == null || typeof content === 'string';
}

/**
 * The common chat completion or stream chunk — content deltas, no error, usage optional, no Groq
 * extension — checked by hand so the hot path skips zod (a third of the cost of reading a chat
 * chunk). Anything else goes through `openaiChatSchema`.
 */
export function isPlainChat(raw: unknown): boolean {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return false;
  const chunk = raw as Record<string, unknown>;
  if (chunk.error != null || chunk.x_groq != null || !isPlainUsage(chunk.usage)) return false;
  if (chunk.system_fingerprint != null && typeof chunk.system_fingerprint !== 'string') return false;
  const choices = chunk.choices;
  if (!Array.isArray(choices)) return false;
  for (const choice of choices) {
    if (typeof choice !== 'object' || choice === null || Array.isArray(choice)) return false;
    const { index, message, delta, finish_reason: finish } = choice as Record<string, unknown>;
    if (index != null && !isNonNegativeInteger(index)) return false;
    if (!isPlainContent(message) || !isPlainContent(delta)) return false;
    if (finish != null && typeof finish !== 'string') return false;
  }
  return true;
}

/** `{error: {message}}` (OpenAI), `{error: "…"}` (Ollama), `{message}` / `{detail}` (vLLM, others). */
export const openaiErrorBodySchema = z.object({
  error: z.union([z.string(), z.object({ message: z.string().nullish() })]).nullish(),
  message: z.string().nullish(),
  detail: z.unknown().optional(),
});
