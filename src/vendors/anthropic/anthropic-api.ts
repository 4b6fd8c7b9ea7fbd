/** A limited, tolerant version of the Anthropic Messages API schemas: only the fields the gateway reads. */
import { z } from 'zod';

const count = z.number().int().nonnegative();

export const anthropicUsageSchema = z.object({
  input_tokens: count.nullish(),
  output_tokens: count.nullish(),
  cache_creation_input_tokens: count.nullish(),
  cache_read_input_tokens: count.nullish(),
});

export type AnthropicUsage = z.infer<typeof anthropicUsageSchema>;

const errorSchema = z.object({ type: z.string().nullish(), message: z.string().nullish() });

/** One SSE event's data; `type` says which (message_start, content_block_delta, …, ping, error). */
export const anthropicStreamEventSchema = z.object({
  type: z.string(),
  message: z.object({ usage: anthropicUsageSchema.nullish() }).nullish(),
  content_block: z.object({ type: z.string(), text: z.string().nullish() }).nullish(),
  delta: z.object({ type: z.string().nullish(), text: z.string().nullish(), stop_reason: z.string().nullish() }).nullish(),
  usage: anthropicUsageSchema.nullish(),
  error: errorSchema.nullish(),
});

const isNullOrString = (value: unknown) => value == null || typeof value === 'string';

/**
 * The hot stream event — a `content_block_delta` carrying text, nothing else set — checked by hand
 * so it skips zod; every other event (and any doubt) goes through `anthropicStreamEventSchema`.
 */
export function isPlainAnthropicDelta(raw: unknown): boolean {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return false;
  const event = raw as Record<string, unknown>;
  if (event.type !== 'content_block_delta' || event.message != null || event.content_block != null || event.usage != null || event.error != null) return false;
  const delta = event.delta;
  if (delta == null) return true;
  if (typeof delta !== 'object' || Array.isArray(delta)) return false;
  const { type, text, stop_reason: stopReason } = delta as Record<string, unknown>;
  return isNullOrString(type) && isNullOrString(text) && isNullOrString(stopReason);
}

export const anthropicMessageSchema = z.object({
  content: z.array(z.object({ type: z.string(), text: z.string().nullish() })).nullish(),
  stop_reason: z.string().nullish(),
  usage: anthropicUsageSchema.nullish(),
});

export const anthropicErrorBodySchema = z.object({ error: errorSchema.nullish() });

/** The HTTP status Anthropic uses for each error type, for errors that arrive inside a stream. */
export const anthropicErrorStatus: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};
