/** Native completions responses and SSE streams → call parts. Choice indexes are the upstream's own. */
import type { CallPart } from '../shared/call-part.js';
import { malformedUpstream, upstreamStreamError } from '../shared/map-upstream-error.js';
import { parseUpstreamJson } from '../shared/parse-upstream-json.js';
import { decodeSseBody } from '../shared/decode-sse-body.js';
import type { Usage } from '../types.js';
import { isPlainCompletionChunk, openaiCompletionSchema, type OpenAICompletion } from './openai-api.js';
import { mapOpenAIFinishReason } from './map-openai-finish-reason.js';
import { mapOpenAILogprobs } from './map-openai-logprobs.js';
import { mapOpenAIUsage } from './map-openai-usage.js';

export function completionResponseParts(vendor: string, text: string): CallPart[] {
  const body = parseUpstreamJson(vendor, openaiCompletionSchema, text, 'a completion');
  if (body.error) throw upstreamStreamError(vendor, body.error.message ?? null);
  const parts: CallPart[] = [];
  if (body.system_fingerprint) parts.push({ type: 'metadata', systemFingerprint: body.system_fingerprint });
  for (const choice of body.choices ?? []) {
    const index = choice.index ?? 0;
    const logprobs = mapOpenAILogprobs(choice.logprobs);
    if (choice.text || logprobs) parts.push({ type: 'text-delta', choice: index, text: choice.text ?? '', ...(logprobs ? { logprobs } : {}) });
    parts.push({ type: 'finish', choice: index, finishReason: mapOpenAIFinishReason(choice.finish_reason ?? 'stop') });
  }
  if (body.usage) parts.push({ type: 'usage', usage: mapOpenAIUsage(body.usage) });
  return parts;
}

/**
 * Usage may arrive in a dedicated last chunk (include_usage) or, on some servers, cumulatively on
 * several chunks: the last one seen is yielded once, at the end, so it is never double counted.
 */
export function completionStreamParts(vendor: string, body: AsyncIterable<Buffer>, choiceCount: number): AsyncGenerator<CallPart[]> {
  let usage: Usage | null = null;
  let fingerprintSent = false;
  const finished = new Set<number>();
  let done = false;
  return decodeSseBody(vendor, body, {
    event(event, out) {
      // Keep reading to the end of the body after [DONE] so the connection goes back to the pool.
      if (done) return;
      if (event.data === '[DONE]') {
        done = true;
        return;
      }
      const chunk: OpenAICompletion = parseUpstreamJson(vendor, openaiCompletionSchema, event.data, 'a broken stream chunk', isPlainCompletionChunk);
      if (chunk.error) throw upstreamStreamError(vendor, chunk.error.message ?? null);
      if (chunk.system_fingerprint && !fingerprintSent) {
        fingerprintSent = true;
        out.push({ type: 'metadata', systemFingerprint: chunk.system_fingerprint });
      }
      for (const choice of chunk.choices ?? []) {
        const index = choice.index ?? 0;
        const logprobs = mapOpenAILogprobs(choice.logprobs);
        if (choice.text || logprobs) out.push(logprobs ? { type: 'text-delta', choice: index, text: choice.text ?? '', logprobs } : { type: 'text-delta', choice: index, text: choice.text ?? '' });
        if (choice.finish_reason) {
          finished.add(index);
          out.push({ type: 'finish', choice: index, finishReason: mapOpenAIFinishReason(choice.finish_reason) });
        }
      }
      if (chunk.usage) usage = mapOpenAIUsage(chunk.usage);
    },
    end(out) {
      // Tolerate a missing [DONE] only when every choice already finished.
      if (!done && finished.size < choiceCount) throw malformedUpstream(vendor, 'a stream that ended before every choice finished');
      if (usage) out.push({ type: 'usage', usage });
    },
  });
}
