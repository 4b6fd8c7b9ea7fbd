/** Native completions responses and SSE streams → call parts. Choice indexes are the upstream's own. */
import type { CallPart } from '../shared/call-part.js';
import { upstreamStreamError } from '../shared/map-upstream-error.js';
import { parseUpstreamJson } from '../shared/parse-upstream-json.js';
import { openaiCompletionSchema, type OpenAICompletion } from './openai-compatible-api.js';
import { mapOpenAICompatibleFinishReason } from './map-openai-compatible-finish-reason.js';
import { mapOpenAICompatibleLogprobs } from './map-openai-compatible-logprobs.js';
import { mapOpenAICompatibleUsage } from './map-openai-compatible-usage.js';
import { openaiCompatibleStreamParts } from './openai-compatible-stream-parts.js';

export function completionResponseParts(vendor: string, text: string): CallPart[] {
  const body = parseUpstreamJson(vendor, openaiCompletionSchema, text, 'a completion');
  if (body.error) throw upstreamStreamError(vendor, body.error.message ?? null);
  const parts: CallPart[] = [];
  if (body.system_fingerprint) parts.push({ type: 'metadata', systemFingerprint: body.system_fingerprint });
  for (const choice of body.choices ?? []) {
    const index = choice.index ?? 0;
    textPart(choice, index, parts);
    parts.push({ type: 'finish', choice: index, finishReason: mapOpenAICompatibleFinishReason(choice.finish_reason ?? 'stop') });
  }
  const usage = mapOpenAICompatibleUsage(body.usage);
  if (usage) parts.push({ type: 'usage', usage });
  return parts;
}

export function completionStreamParts(vendor: string, body: AsyncIterable<Buffer>, choiceCount: number): AsyncGenerator<CallPart[]> {
  return openaiCompatibleStreamParts<OpenAICompletion>(vendor, body, choiceCount, {
    parse: (data) => parseUpstreamJson(vendor, openaiCompletionSchema, data, 'a broken stream chunk'),
    choices(chunk, out) {
      for (const choice of chunk.choices ?? []) {
        const index = choice.index ?? 0;
        textPart(choice, index, out);
        if (choice.finish_reason) out.push({ type: 'finish', choice: index, finishReason: mapOpenAICompatibleFinishReason(choice.finish_reason) });
      }
    },
    usage: (chunk) => mapOpenAICompatibleUsage(chunk.usage),
  });
}

type CompletionChoice = NonNullable<OpenAICompletion['choices']>[number];

/** The choice's text with its logprobs, when it has either (an echoed empty prompt has logprobs and no text). */
function textPart(choice: CompletionChoice, index: number, out: CallPart[]): void {
  const logprobs = mapOpenAICompatibleLogprobs(choice.logprobs);
  if (!choice.text && !logprobs) return;
  out.push(
    logprobs ? { type: 'text-delta', choice: index, text: choice.text ?? '', logprobs } : { type: 'text-delta', choice: index, text: choice.text ?? '' },
  );
}
