/** Chat completions responses and SSE streams → call parts (chat-mode completions). */
import type { CallPart } from '../shared/call-part.js';
import { upstreamStreamError } from '../shared/map-upstream-error.js';
import { parseUpstreamJson } from '../shared/parse-upstream-json.js';
import { openaiChatSchema, type OpenAIChat } from './openai-compatible-api.js';
import { mapOpenAICompatibleFinishReason } from './map-openai-compatible-finish-reason.js';
import { mapOpenAICompatibleUsage } from './map-openai-compatible-usage.js';
import { openaiCompatibleStreamParts } from './openai-compatible-stream-parts.js';

export function chatResponseParts(vendor: string, text: string): CallPart[] {
  const body = parseUpstreamJson(vendor, openaiChatSchema, text, 'a chat completion');
  if (body.error) throw upstreamStreamError(vendor, body.error.message ?? null);
  const parts: CallPart[] = [];
  if (body.system_fingerprint) parts.push({ type: 'metadata', systemFingerprint: body.system_fingerprint });
  for (const choice of body.choices ?? []) {
    const index = choice.index ?? 0;
    const content = choice.message?.content;
    if (content) parts.push({ type: 'text-delta', choice: index, text: content });
    parts.push({ type: 'finish', choice: index, finishReason: mapOpenAICompatibleFinishReason(choice.finish_reason ?? 'stop') });
  }
  const usage = mapOpenAICompatibleUsage(body.usage ?? body.x_groq?.usage);
  if (usage) parts.push({ type: 'usage', usage });
  return parts;
}

export function chatStreamParts(vendor: string, body: AsyncIterable<Buffer>, choiceCount: number): AsyncGenerator<CallPart[]> {
  return openaiCompatibleStreamParts<OpenAIChat>(vendor, body, choiceCount, {
    parse: (data) => parseUpstreamJson(vendor, openaiChatSchema, data, 'a broken stream chunk'),
    choices(chunk, out) {
      for (const choice of chunk.choices ?? []) {
        const index = choice.index ?? 0;
        const content = choice.delta?.content;
        if (content) out.push({ type: 'text-delta', choice: index, text: content });
        if (choice.finish_reason) out.push({ type: 'finish', choice: index, finishReason: mapOpenAICompatibleFinishReason(choice.finish_reason) });
      }
    },
    usage: (chunk) => mapOpenAICompatibleUsage(chunk.usage ?? chunk.x_groq?.usage),
  });
}
