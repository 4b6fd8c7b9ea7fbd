/**
 * The response objects as schemas: they document the API (OpenAPI) and let tests check that real
 * responses match the contract exactly (strict objects: no extra or missing fields).
 */
import { z } from 'zod';

const finishReason = z.enum(['stop', 'length', 'content_filter']);

export const choiceLogprobsSchema = z.strictObject({
  text_offset: z.array(z.number().int()),
  token_logprobs: z.array(z.number().nullable()),
  tokens: z.array(z.string()),
  top_logprobs: z.array(z.record(z.string(), z.number()).nullable()),
});

export const completionUsageSchema = z.strictObject({
  completion_tokens: z.number().int().min(0),
  prompt_tokens: z.number().int().min(0),
  total_tokens: z.number().int().min(0),
  completion_tokens_details: z.strictObject({
    accepted_prediction_tokens: z.number().int(),
    audio_tokens: z.number().int(),
    reasoning_tokens: z.number().int(),
    rejected_prediction_tokens: z.number().int(),
  }),
  prompt_tokens_details: z.strictObject({ audio_tokens: z.number().int(), cached_tokens: z.number().int() }),
});

/** The fields a Completion and its stream chunks share; chunks differ in finish_reason and usage. */
const completionShape = <Finish extends z.ZodType>(finish: Finish) => ({
  id: z.string().regex(/^cmpl-/),
  object: z.literal('text_completion'),
  created: z.number().int(),
  model: z.string(),
  system_fingerprint: z.string().nullable(),
  choices: z.array(z.strictObject({ text: z.string(), index: z.number().int().min(0), logprobs: choiceLogprobsSchema.nullable(), finish_reason: finish })),
});

export const completionSchema = z.strictObject({ ...completionShape(finishReason), usage: completionUsageSchema });

export const completionChunkSchema = z.strictObject({ ...completionShape(finishReason.nullable()), usage: completionUsageSchema.nullable().optional() });

export const errorSchema = z.strictObject({
  error: z.strictObject({ message: z.string(), type: z.string(), param: z.string().nullable(), code: z.string().nullable() }),
});
