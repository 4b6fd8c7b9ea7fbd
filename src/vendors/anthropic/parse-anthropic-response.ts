/** Messages API responses and SSE event streams → call parts (one choice per call). */
import type { CallPart } from '../shared/call-part.js';
import { malformedUpstream } from '../shared/map-upstream-error.js';
import { parseUpstreamJson } from '../shared/parse-upstream-json.js';
import { decodeSseBody } from '../shared/decode-sse-body.js';
import type { VendorError } from '../../errors/vendor-error.js';
import { anthropicErrorStatus, anthropicMessageSchema, anthropicStreamEventSchema, type AnthropicUsage } from './anthropic-api.js';
import { mapAnthropicFinishReason } from './map-anthropic-finish-reason.js';
import { mapAnthropicUsage, mergeAnthropicUsage } from './map-anthropic-usage.js';

/** Builds the VendorError for an error Anthropic reports (stream `error` event). */
export type AnthropicFailure = (status: number, message: string | null) => VendorError;

export function anthropicMessageParts(vendor: string, text: string): CallPart[] {
  const message = parseUpstreamJson(vendor, anthropicMessageSchema, text, 'a message');
  const parts: CallPart[] = [];
  const content = (message.content ?? [])
    .filter((block) => block.type === 'text')
    .map((block) => block.text ?? '')
    .join('');
  if (content) parts.push({ type: 'text-delta', choice: 0, text: content });
  parts.push({ type: 'finish', choice: 0, finishReason: mapAnthropicFinishReason(message.stop_reason) });
  const usage = mapAnthropicUsage(message.usage);
  if (usage) parts.push({ type: 'usage', usage });
  return parts;
}

export function anthropicStreamParts(vendor: string, body: AsyncIterable<Buffer>, failure: AnthropicFailure): AsyncGenerator<CallPart[]> {
  let usage: AnthropicUsage = {};
  let stopReason: string | null = null;
  let sawDelta = false;
  let done = false;
  return decodeSseBody(vendor, body, {
    event(event, out) {
      if (done) return;
      const data = parseUpstreamJson(vendor, anthropicStreamEventSchema, event.data, 'a broken stream event');
      switch (data.type) {
        case 'message_start':
          if (data.message?.usage) {
            usage = mergeAnthropicUsage(usage, data.message.usage);
            const progress = mapAnthropicUsage(usage);
            if (progress) out.push({ type: 'usage-progress', usage: progress });
          }
          break;
        case 'content_block_start':
          if (data.content_block?.type === 'text' && data.content_block.text) out.push({ type: 'text-delta', choice: 0, text: data.content_block.text });
          break;
        case 'content_block_delta':
          // Only text: thinking and tool deltas cannot occur without the features that enable them.
          if (data.delta?.type === 'text_delta' && data.delta.text) out.push({ type: 'text-delta', choice: 0, text: data.delta.text });
          break;
        case 'message_delta':
          sawDelta = true;
          stopReason = data.delta?.stop_reason ?? stopReason;
          if (data.usage) usage = mergeAnthropicUsage(usage, data.usage);
          break;
        case 'message_stop':
          done = true;
          break;
        case 'error': {
          const status = anthropicErrorStatus[data.error?.type ?? ''] ?? 500;
          throw failure(status, data.error?.message ?? null);
        }
        default:
          // ping, content_block_stop, and event types added after this was written.
          break;
      }
    },
    end(out) {
      if (!done && !sawDelta) throw malformedUpstream(vendor, 'a stream that ended before message_stop');
      out.push({ type: 'finish', choice: 0, finishReason: mapAnthropicFinishReason(stopReason) });
      const reported = mapAnthropicUsage(usage);
      if (reported) out.push({ type: 'usage', usage: reported });
    },
  });
}
