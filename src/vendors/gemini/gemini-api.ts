/** A limited, tolerant version of the Gemini generateContent schemas: only the fields the gateway reads. */
import { z } from 'zod';

const count = z.number().int().nonnegative();

/** Token counts (`usageMetadata`), cumulative on every stream chunk. */
export const geminiUsageSchema = z.object({
  promptTokenCount: count.nullish(),
  candidatesTokenCount: count.nullish(),
  cachedContentTokenCount: count.nullish(),
  thoughtsTokenCount: count.nullish(),
  toolUsePromptTokenCount: count.nullish(),
});

/** Token counts as Gemini reports them. */
export type GeminiUsage = z.infer<typeof geminiUsageSchema>;

/** An error, in an error answer or inside a stream chunk. */
export const geminiErrorSchema = z.object({
  code: z.number().int().nullish(),
  message: z.string().nullish(),
  status: z.string().nullish(),
  details: z.array(z.object({ '@type': z.string().nullish(), reason: z.string().nullish(), retryDelay: z.string().nullish() })).nullish(),
});

/** A parsed Gemini error. */
export type GeminiError = z.infer<typeof geminiErrorSchema>;

/** One GenerateContentResponse: the whole answer, or one SSE chunk of a stream. */
export const geminiResponseSchema = z.object({
  candidates: z
    .array(
      z.object({
        content: z.object({ parts: z.array(z.object({ text: z.string().nullish(), thought: z.boolean().nullish() })).nullish() }).nullish(),
        finishReason: z.string().nullish(),
      }),
    )
    .nullish(),
  promptFeedback: z.object({ blockReason: z.string().nullish() }).nullish(),
  usageMetadata: geminiUsageSchema.nullish(),
  error: geminiErrorSchema.nullish(),
});

/** A parsed GenerateContentResponse. */
export type GeminiResponse = z.infer<typeof geminiResponseSchema>;

/** An error answer's body (`{error: {code, message, status, details}}`). */
export const geminiErrorBodySchema = z.object({ error: geminiErrorSchema.nullish() });
