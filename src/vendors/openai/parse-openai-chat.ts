/** Chat completions responses and SSE streams → call parts (chat-mode completions). */
import type { CallPart } from '../shared/call-part.js';
import { malformedUpstream, upstreamStreamError } from '../shared/map-upstream-error.js';
import { parseUpstreamJson } from '../shared/parse-upstream-json.js';
import { decodeSseBody } from '../shared/decode-sse-body.js';
import type { Usage } from '../types.js';
import { openaiChatSchema, type OpenAIChat } from './openai-api.js';
import { mapOpenAIFinishReason } from './map-openai-finish-reason.js';
import { mapOpenAIUsage } from './map-openai-usage.js';

export function chatResponseParts(vendor: string, text: string): CallPart[] {
  const body = parseUpstreamJson(vendor, openaiChatSchema, text, 'a chat completion');
  if (body.error) throw upstreamStreamError(vendor, body.error.message ?? null);
  const parts: CallPart[] = [];
  if (body.system_fingerprint) parts.push({ type: 'metadata', systemFingerprint: body.system_fingerprint });
  for (const choice of body.choices ?? []) {
    const index = choice.index ?? 0;
    const content = choice.message?.content;
    if (content) parts.push({ type: 'text-delta', choice: index, text: content });
    parts.push({ type: 'finish', choice: index, finishReason: mapOpenAIFinishReason(choice.finish_reason ?? 'stop') });
  }
  const usage = body.usage ?? body.x_groq?.usage;
  if (usage) parts.push({ type: 'usage', usage: mapOpenAIUsage(usage) });
  return parts;
}

export function chatStreamParts(vendor: string, body: AsyncIterable<Buffer>, choiceCount: number): AsyncGenerator<CallPart[]> {
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
      const chunk: OpenAIChat = parseUpstreamJson(vendor, openaiChatSchema, event.data, 'a broken stream chunk');
      if (chunk.error) throw upstreamStreamError(vendor, chunk.error.message ?? null);
      if (chunk.system_fingerprint && !fingerprintSent) {
        fingerprintSent = true;
        out.push({ type: 'metadata', systemFingerprint: chunk.system_fingerprint });
      }
      for (const choice of chunk.choices ?? []) {
        const index = choice.index ?? 0;
        const content = choice.delta?.content;
        if (content) out.push({ type: 'text-delta', choice: index, text: content });
        if (choice.finish_reason) {
          finished.add(index);
          out.push({ type: 'finish', choice: index, finishReason: mapOpenAIFinishReason(choice.finish_reason) });
        }
      }
      const chunkUsage = chunk.usage ?? chunk.x_groq?.usage;
      if (chunkUsage) usage = mapOpenAIUsage(chunkUsage);
    },
    end(out) {
      if (!done && finished.size < choiceCount) throw malformedUpstream(vendor, 'a stream that ended before every choice finished');
      if (usage) out.push({ type: 'usage', usage });
    },
  });
}
