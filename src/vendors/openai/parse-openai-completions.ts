/** Native completions responses and SSE streams → call parts. Choice indexes are the upstream's own. */
import type { CallPart } from '../shared/call-part.js';
import { upstreamStreamError } from '../shared/map-upstream-error.js';
import { parseUpstreamJson } from '../shared/parse-upstream-json.js';
import { isPlainCompletion, openaiCompletionSchema, type OpenAICompletion } from './openai-api.js';
import { mapOpenAIFinishReason } from './map-openai-finish-reason.js';
import { mapOpenAILogprobs } from './map-openai-logprobs.js';
import { mapOpenAIUsage } from './map-openai-usage.js';
import { openaiStreamParts } from './openai-stream-parts.js';

export function completionResponseParts(vendor: string, text: string): CallPart[] {
  const body = parseUpstreamJson(vendor, openaiCompletionSchema, text, 'a completion', isPlainCompletion);
  if (body.error) throw upstreamStreamError(vendor, body.error.message ?? null);
  const parts: CallPart[] = [];
  if (body.system_fingerprint) parts.push({ type: 'metadata', systemFingerprint: body.system_fingerprint });
  for (const choice of body.choices ?? []) {
    const index = choice.index ?? 0;
    const logprobs = mapOpenAILogprobs(choice.logprobs);
    if (choice.text || logprobs) parts.push({ type: 'text-delta', choice: index, text: choice.text ?? '', ...(logprobs ? { logprobs } : {}) });
    parts.push({ type: 'finish', choice: index, finishReason: mapOpenAIFinishReason(choice.finish_reason ?? 'stop') });
  }
  const usage = mapOpenAIUsage(body.usage);
  if (usage) parts.push({ type: 'usage', usage });
  return parts;
}

export function completionStreamParts(vendor: string, body: AsyncIterable<Buffer>, choiceCount: number): AsyncIterableIterator<CallPart[]> {
  return openaiStreamParts<OpenAICompletion>(vendor, body, choiceCount, {
    parse: (data) => parseUpstreamJson(vendor, openaiCompletionSchema, data, 'a broken stream chunk', isPlainCompletion),
    choices(chunk, out) {
      for (const choice of chunk.choices ?? []) {
        const index = choice.index ?? 0;
        const logprobs = mapOpenAILogprobs(choice.logprobs);
        if (choice.text || logprobs) out.push(logprobs ? { type: 'text-delta', choice: index, text: choice.text ?? '', logprobs } : { type: 'text-delta', choice: index, text: choice.text ?? '' });
        if (choice.finish_reason) out.push({ type: 'finish', choice: index, finishReason: mapOpenAIFinishReason(choice.finish_reason) });
      }
    },
    usage: (chunk) => mapOpenAIUsage(chunk.usage),
  });
}
