/**
 * What one upstream call yields before the shared shaping step turns it into client-facing parts;
 * choice indexes are local to the call (`shape-choices` makes them global). `usage` is the call's
 * final usage as the vendor reported it (a later report replaces an earlier one); `usage-progress`
 * carries the counts reported so far (Anthropic's message_start, Gemini's running usageMetadata),
 * so a call that ends before its final usage (a gateway-enforced stop, a failure after output, a
 * client cancel) is still metered with the prompt tokens the vendor already told us. Neither
 * reaches the client: the call reports its usage once, at its end (see `CallUsage`).
 */
import type { StreamPart, Usage } from '../types.js';

export type CallPart = StreamPart | { type: 'usage'; usage: Usage } | { type: 'usage-progress'; usage: Usage };
