/** A limited, tolerant version of the Gemini generateContent schemas: only the fields the gateway reads. */
import { z } from 'zod';

const count = z.number().int().nonnegative();

export const geminiUsageSchema = z.object({
  promptTokenCount: count.nullish(),
  candidatesTokenCount: count.nullish(),
  cachedContentTokenCount: count.nullish(),
  thoughtsTokenCount: count.nullish(),
  toolUsePromptTokenCount: count.nullish(),
});

export type GeminiUsage = z.infer<typeof geminiUsageSchema>;

export const geminiErrorSchema = z.object({
  code: z.number().int().nullish(),
  message: z.string().nullish(),
  status: z.string().nullish(),
  details: z.array(z.object({ '@type': z.string().nullish(), reason: z.string().nullish(), retryDelay: z.string().nullish() })).nullish(),
});

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

export type GeminiResponse = z.infer<typeof geminiResponseSchema>;

export const geminiErrorBodySchema = z.object({ error: geminiErrorSchema.nullish() });
