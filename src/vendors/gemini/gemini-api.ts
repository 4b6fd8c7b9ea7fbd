/** A limited, tolerant version of the Gemini generateContent schemas: only the fields the gateway reads. */
import { z } from 'zod';
import { hasCounts, isNullOrBoolean, isNullOrString, isRecord } from '../shared/plain-values.js';

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

const usageCounts = ['promptTokenCount', 'candidatesTokenCount', 'cachedContentTokenCount', 'thoughtsTokenCount', 'toolUsePromptTokenCount'] as const;

function isPlainCandidate(candidate: unknown): boolean {
  if (!isRecord(candidate) || !isNullOrString(candidate.finishReason)) return false;
  const content = candidate.content;
  if (content == null) return true;
  if (!isRecord(content)) return false;
  const parts = content.parts;
  if (parts == null) return true;
  if (!Array.isArray(parts)) return false;
  for (const part of parts) if (!isRecord(part) || !isNullOrString(part.text) || !isNullOrBoolean(part.thought)) return false;
  return true;
}

/**
 * A response or stream chunk without an error, checked by hand so the hot path skips zod; anything
 * else (and any doubt) goes through `geminiResponseSchema`.
 */
export function isPlainGeminiResponse(raw: unknown): boolean {
  if (!isRecord(raw) || raw.error != null) return false;
  const feedback = raw.promptFeedback;
  if (feedback != null && (!isRecord(feedback) || !isNullOrString(feedback.blockReason))) return false;
  if (!hasCounts(raw.usageMetadata, usageCounts)) return false;
  const candidates = raw.candidates;
  if (candidates == null) return true;
  if (!Array.isArray(candidates)) return false;
  for (const candidate of candidates) if (!isPlainCandidate(candidate)) return false;
  return true;
}

export const geminiErrorBodySchema = z.object({ error: geminiErrorSchema.nullish() });
