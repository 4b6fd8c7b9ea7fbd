/**
 * A limited, tolerant version of the OpenAI wire schemas, which every OpenAI-compatible server
 * speaks: only the fields the gateway reads, optional fields nullable, unknown fields ignored.
 */
import { z } from 'zod';

const count = z.number().int().nonnegative();

/** Token counts, on a whole answer or a stream's usage chunk. */
export const openaiUsageSchema = z.object({
  prompt_tokens: count.nullish(),
  completion_tokens: count.nullish(),
  prompt_tokens_details: z.object({ cached_tokens: count.nullish(), audio_tokens: count.nullish() }).nullish(),
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

/** The legacy completions `logprobs` object: parallel arrays, one entry per token. */
export const openaiLogprobsSchema = z.object({
  tokens: z.array(z.string()).nullish(),
  token_logprobs: z.array(z.number().nullable()).nullish(),
  top_logprobs: z.array(z.record(z.string(), z.number()).nullable()).nullish(),
});

export type OpenAILogprobs = z.infer<typeof openaiLogprobsSchema>;

const streamErrorSchema = z.object({ message: z.string().nullish(), type: z.string().nullish(), code: z.unknown().optional() }).nullish();

/** A completions answer, or one chunk of a completions stream. */
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

/** A chat completion, or one chunk of a chat stream (chat-mode completions). */
export const openaiChatSchema = z.object({
  system_fingerprint: z.string().nullish(),
  choices: z
    .array(
      z.object({
        index: z.number().int().nonnegative().nullish(),
        message: z.object({ content: z.string().nullish() }).nullish(),
        delta: z.object({ content: z.string().nullish() }).nullish(),
        /** Asked for by chat completions only: one entry per token, with its alternatives. */
        logprobs: z
          .object({
            content: z
              .array(
                z.object({
                  token: z.string(),
                  logprob: z.number(),
                  top_logprobs: z.array(z.object({ token: z.string(), logprob: z.number() })).nullish(),
                }),
              )
              .nullish(),
          })
          .nullish(),
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

/** `{error: {message, type, code}}` (OpenAI), `{error: "…"}` (Ollama), `{message}` / `{detail}` (vLLM, others). */
export const openaiErrorBodySchema = z.object({
  error: z.union([z.string(), z.object({ message: z.string().nullish(), type: z.string().nullish(), code: z.unknown().optional() })]).nullish(),
  message: z.string().nullish(),
  detail: z.unknown().optional(),
});
