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

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isNullOr = (value: unknown, type: 'string' | 'boolean') => value == null || typeof value === type;
const isCount = (value: unknown) => value == null || (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0);
const usageCounts = ['promptTokenCount', 'candidatesTokenCount', 'cachedContentTokenCount', 'thoughtsTokenCount', 'toolUsePromptTokenCount'] as const;

function isPlainCandidate(candidate: unknown): boolean {
  if (!isRecord(candidate) || !isNullOr(candidate.finishReason, 'string')) return false;
  const content = candidate.content;
  if (content == null) return true;
  if (!isRecord(content)) return false;
  const parts = content.parts;
  if (parts == null) return true;
  if (!Array.isArray(parts)) return false;
  for (const part of parts) if (!isRecord(part) || !isNullOr(part.text, 'string') || !isNullOr(part.thought, 'boolean')) return false;
  return true;
}

/**
 * A response or stream chunk without an error, checked by hand so the hot path skips zod; anything
 * else (and any doubt) goes through `geminiResponseSchema`.
 */
export function isPlainGeminiResponse(raw: unknown): boolean {
  if (!isRecord(raw) || raw.error != null) return false;
  const feedback = raw.promptFeedback;
  if (feedback != null && (!isRecord(feedback) || !isNullOr(feedback.blockReason, 'string'))) return false;
  const usage = raw.usageMetadata;
  if (usage != null) {
    if (!isRecord(usage)) return false;
    for (const field of usageCounts) if (!isCount(usage[field])) return false;
  }
  const candidates = raw.candidates;
  if (candidates == null) return true;
  if (!Array.isArray(candidates)) return false;
  for (const candidate of candidates) if (!isPlainCandidate(candidate)) return false;
  return true;
}

export const geminiErrorBodySchema = z.object({ error: geminiErrorSchema.nullish() });
