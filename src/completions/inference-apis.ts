/**
 * The two inference APIs on the one pipeline: legacy text completions and chat completions. Each
 * names its path, its id prefix, its request parser, and how it writes the run's answer; the run
 * itself (routing, admission, generation, metering, the ledger) is the same.
 */
import { ChatChunks, toChatCompletion } from './chat-objects.js';
import type { Completion } from './completion-objects.js';
import type { RequestParser } from './completion-pipeline.js';
import type { ParsedCompletionRequest } from './parse-completion-request.js';
import { parseChatRequest } from './parse-chat-request.js';
import { parseCompletionRequest } from './parse-completion-request.js';

export interface InferenceApi {
  path: '/v5/completions' | '/v5/chat/completions';
  /** The completion ids' prefix (also the ledger's request ids). */
  idPrefix: 'cmpl-' | 'chatcmpl-';
  parse: RequestParser;
  /** The whole answer to `parsed` as this API writes it. */
  whole(completion: Completion, parsed: ParsedCompletionRequest): unknown;
  /** A new stream's chunk writer (chat's remembers which choices have named their role). */
  chunkWriter(parsed: ParsedCompletionRequest): (chunk: Completion) => unknown;
}

const asIs = (completion: Completion): unknown => completion;

export const completionsApi: InferenceApi = {
  path: '/v5/completions',
  idPrefix: 'cmpl-',
  parse: parseCompletionRequest,
  whole: asIs,
  chunkWriter: () => asIs,
};

export const chatCompletionsApi: InferenceApi = {
  path: '/v5/chat/completions',
  idPrefix: 'chatcmpl-',
  parse: parseChatRequest,
  whole: (completion, parsed) => toChatCompletion(completion, topLogprobsOf(parsed)),
  chunkWriter(parsed) {
    const chunks = new ChatChunks(topLogprobsOf(parsed));
    return (chunk) => chunks.chunk(chunk);
  },
};

/** `top_logprobs` as asked (0 with `logprobs` alone); the run's legacy logprobs may hold one more, the sampled token. */
function topLogprobsOf(parsed: ParsedCompletionRequest): number {
  return parsed.generation.logprobs ?? 0;
}
