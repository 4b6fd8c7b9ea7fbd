/**
 * A limited, tolerant version of the OpenAI wire schemas: only the fields the gateway reads,
 * optional fields nullable, unknown fields ignored. OpenAI-compatible servers share these.
 */
import { z } from 'zod';
import { hasCounts, isCount, isNullOrString, isRecord } from '../shared/plain-values.js';

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
 * The envelope both OpenAI formats share: no error, usage plain or absent, a string fingerprint,
 * and `choices` an array of objects that each pass `isPlainChoice`.
 */
function isPlainEnvelope(chunk: Record<string, unknown>, isPlainChoice: (choice: Record<string, unknown>) => boolean): boolean {
  if (chunk.error != null || !isPlainUsage(chunk.usage) || !isNullOrString(chunk.system_fingerprint)) return false;
  const choices = chunk.choices;
  if (!Array.isArray(choices)) return false;
  for (const choice of choices) if (!isRecord(choice) || !isPlainChoice(choice)) return false;
  return true;
}

function isPlainCompletionChoice(choice: Record<string, unknown>): boolean {
  return isCount(choice.index) && isNullOrString(choice.text) && choice.logprobs == null && isNullOrString(choice.finish_reason);
}

/**
 * The common completion body or stream chunk — text choices without logprobs, no error, usage
 * optional — checked by hand so the hot path skips zod. Anything else (or any doubt) goes through
 * `openaiCompletionSchema`.
 */
export function isPlainCompletion(raw: unknown): boolean {
  return isRecord(raw) && isPlainEnvelope(raw, isPlainCompletionChoice);
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
  return value == null || (isRecord(value) && isNullOrString(value.content));
}

function isPlainChatChoice(choice: Record<string, unknown>): boolean {
  return isCount(choice.index) && isPlainContent(choice.message) && isPlainContent(choice.delta) && isNullOrString(choice.finish_reason);
}

/**
 * The common chat completion or stream chunk — content deltas, no error, usage optional, no Groq
 * extension — checked by hand so the hot path skips zod (a third of the cost of reading a chat
 * chunk). Anything else goes through `openaiChatSchema`.
 */
export function isPlainChat(raw: unknown): boolean {
  return isRecord(raw) && raw.x_groq == null && isPlainEnvelope(raw, isPlainChatChoice);
}

/** `{error: {message}}` (OpenAI), `{error: "…"}` (Ollama), `{message}` / `{detail}` (vLLM, others). */
export const openaiErrorBodySchema = z.object({
  error: z.union([z.string(), z.object({ message: z.string().nullish() })]).nullish(),
  message: z.string().nullish(),
  detail: z.unknown().optional(),
});
