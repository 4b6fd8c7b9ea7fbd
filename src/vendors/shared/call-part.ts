/**
 * What one upstream call yields before the shared shaping step turns it into client-facing parts.
 * Choice indexes here are local to the call (0 … choiceCount−1); `shape-choices` makes them global.
 */
import type { StreamPart, Usage } from '../types.js';

/**
 * `usage` is the call's final usage as the vendor reported it (a later report replaces an earlier
 * one). `usage-progress` carries counts the vendor reported so far (Anthropic's message_start,
 * Gemini's running usageMetadata): it lets the gateway meter a call that ended before its final
 * usage (a gateway-enforced stop, a failure after output, a client cancel) with the prompt tokens
 * the vendor already told us. Neither reaches the client: the call reports its usage once, at its
 * end (see `CallUsage`).
 */
export type CallPart = StreamPart | { type: 'usage'; usage: Usage } | { type: 'usage-progress'; usage: Usage };
