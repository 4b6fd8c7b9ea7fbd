/** A limited, tolerant version of the Anthropic Messages API schemas: only the fields the gateway reads. */
import { z } from 'zod';

const count = z.number().int().nonnegative();

/** Token counts, on a message or a stream's message_start and message_delta events. */
export const anthropicUsageSchema = z.object({
  input_tokens: count.nullish(),
  output_tokens: count.nullish(),
  cache_creation_input_tokens: count.nullish(),
  cache_read_input_tokens: count.nullish(),
});

/** Token counts as Anthropic reports them. */
export type AnthropicUsage = z.infer<typeof anthropicUsageSchema>;

const errorSchema = z.object({
  type: z.string().nullish(),
  message: z.string().nullish(),
  /** `error_code` tells a spend limit apart from a rate limit (both are 429 rate_limit_error). */
  details: z.object({ error_code: z.string().nullish() }).nullish(),
});

/** One SSE event's data; `type` says which (message_start, content_block_delta, …, ping, error). */
export const anthropicStreamEventSchema = z.object({
  type: z.string(),
  message: z.object({ usage: anthropicUsageSchema.nullish() }).nullish(),
  content_block: z.object({ type: z.string(), text: z.string().nullish() }).nullish(),
  delta: z.object({ type: z.string().nullish(), text: z.string().nullish(), stop_reason: z.string().nullish() }).nullish(),
  usage: anthropicUsageSchema.nullish(),
  error: errorSchema.nullish(),
});

/** A whole (non-stream) Messages API answer. */
export const anthropicMessageSchema = z.object({
  content: z.array(z.object({ type: z.string(), text: z.string().nullish() })).nullish(),
  stop_reason: z.string().nullish(),
  usage: anthropicUsageSchema.nullish(),
});

/** An error answer's body (`{error: {type, message}}`). */
export const anthropicErrorBodySchema = z.object({ error: errorSchema.nullish() });

/** The HTTP status Anthropic uses for each error type, for errors that arrive inside a stream. */
export const anthropicErrorStatus: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  billing_error: 402,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};
