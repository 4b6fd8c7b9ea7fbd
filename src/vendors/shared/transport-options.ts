/**
 * Connection, timeout and retry settings every vendor's config slice may override. Defaults suit
 * real vendors; tests shrink them. Validated with zod because config slices arrive unvalidated.
 */
import { z } from 'zod';

export const transportOptionsShape = {
  /** TCP + TLS connect timeout, ms (default 10 s). */
  connectTimeoutMs: z.number().int().positive().default(10_000),
  /** Max silence between body bytes (not counted while the gateway's own client holds the upstream paused), and a stream's max wait for its headers, ms (default 60 s). */
  idleTimeoutMs: z.number().int().positive().default(60_000),
  /** Non-stream calls: max wait for the whole answer; streams: for the first event, ms (default 600 s; vendors answer only when done). */
  responseTimeoutMs: z.number().int().positive().default(600_000),
  /** Largest non-stream answer read from an upstream, bytes (default 32 MiB); a bigger one is a 502, never buffered. */
  maxResponseBytes: z.number().int().positive().default(33_554_432),
  /** Retries after the first attempt, before any output (default 2). */
  maxRetries: z.number().int().min(0).max(10).default(2),
  /** First backoff step, ms (default 500); doubles per attempt, with jitter. */
  retryBaseDelayMs: z.number().int().min(0).default(500),
  /** Cap on one backoff step, ms (default 8 s). */
  retryMaxDelayMs: z.number().int().min(0).default(8_000),
  /** A `retry-after` longer than this is not waited for; the 429 goes to the client (default 30 s). */
  maxRetryAfterMs: z.number().int().min(0).default(30_000),
  /** Pooled keep-alive connections per upstream origin (default 64). */
  maxConnectionsPerOrigin: z.number().int().positive().default(64),
  /** Upstream calls one request may run at once when it fans out (prompt list, emulated n; default 16). */
  maxConcurrentCalls: z.number().int().positive().default(16),
};

export const transportOptionsSchema = z.object(transportOptionsShape);

export type TransportOptions = z.infer<typeof transportOptionsSchema>;
