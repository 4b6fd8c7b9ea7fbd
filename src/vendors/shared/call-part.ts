/**
 * What one upstream call yields before the shared shaping step turns it into client-facing parts.
 * Choice indexes here are local to the call (0 … choiceCount−1); `shape-choices` makes them global.
 */
import type { StreamPart, Usage } from '../types.js';

/**
 * `usage-progress` carries counts the vendor reported so far (Anthropic's message_start, Gemini's
 * running usageMetadata). It never reaches the client; it lets the gateway meter a call it aborted
 * itself (gateway-enforced stop) with the prompt tokens the vendor already told us.
 */
export type CallPart = StreamPart | { type: 'usage-progress'; usage: Usage };
