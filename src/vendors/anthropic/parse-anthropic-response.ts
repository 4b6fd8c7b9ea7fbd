/** Messages API responses, SSE event streams and error bodies → call parts (one choice per call). */
import type { CallPart } from '../shared/call-part.js';
import { decodeSseBody } from '../shared/decode-sse-body.js';
import { malformedUpstream } from '../shared/map-upstream-error.js';
import { parseUpstreamJson, tryParseJson } from '../shared/parse-upstream-json.js';
import type { VendorFailure } from '../shared/single-choice-adapter.js';
import type { ExtractedError } from '../shared/upstream-client.js';
import type { FinishReason, Usage } from '../types.js';
import { anthropicErrorBodySchema, anthropicErrorStatus, anthropicMessageSchema, anthropicStreamEventSchema, type AnthropicUsage } from './anthropic-api.js';

export function anthropicMessageParts(vendor: string, text: string): CallPart[] {
  const message = parseUpstreamJson(vendor, anthropicMessageSchema, text, 'a message');
  const parts: CallPart[] = [];
  const content = (message.content ?? [])
    .filter((block) => block.type === 'text')
    .map((block) => block.text ?? '')
    .join('');
  if (content) parts.push({ type: 'text-delta', choice: 0, text: content });
  parts.push({ type: 'finish', choice: 0, finishReason: mapFinishReason(message.stop_reason) });
  const usage = mapUsage(message.usage);
  if (usage) parts.push({ type: 'usage', usage });
  return parts;
}

export function anthropicStreamParts(vendor: string, body: AsyncIterable<Buffer>, failure: VendorFailure): AsyncGenerator<CallPart[]> {
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
            usage = mergeUsage(usage, data.message.usage);
            const progress = mapUsage(usage);
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
          if (data.usage) usage = mergeUsage(usage, data.usage);
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
      out.push({ type: 'finish', choice: 0, finishReason: mapFinishReason(stopReason) });
      const reported = mapUsage(usage);
      if (reported) out.push({ type: 'usage', usage: reported });
    },
  });
}

/** Spend limits arrive as 429 rate_limit_error with one of these codes in `details`. */
const spendLimitCodes = new Set(['enforced_spend_limit_reached', 'contract_spend_limit_reached']);
/** A spent credit balance, or a spend limit the operator set, arrives as 400 invalid_request_error, told apart only by its message. */
const spentBalanceMessage = /^(Your credit balance is too low|You have reached your specified)/;

export function extractAnthropicError(text: string): ExtractedError {
  const error = tryParseJson(anthropicErrorBodySchema, text)?.error;
  const type = error?.type ?? '';
  const message = error?.message ?? null;
  const quotaExhausted =
    type === 'billing_error' ||
    spendLimitCodes.has(error?.details?.error_code ?? '') ||
    (type === 'invalid_request_error' && message !== null && spentBalanceMessage.test(message));
  return {
    message,
    // A 529 overloaded_error is a 5xx like any other; the type only matters when the status is odd.
    ...(type === 'overloaded_error' ? { status: anthropicErrorStatus[type] } : {}),
    ...(quotaExhausted ? { quotaExhausted } : {}),
  };
}

function mapFinishReason(reason: string | null | undefined): FinishReason {
  if (reason === 'max_tokens' || reason === 'model_context_window_exceeded') return 'length';
  if (reason === 'refusal') return 'content_filter';
  // end_turn, stop_sequence, pause_turn, tool_use (never requested here).
  return 'stop';
}

/**
 * Anthropic's input_tokens excludes cache reads and cache writes; the completions contract counts
 * every prompt token in prompt_tokens, with the cache hits broken out as cached_tokens. Cache
 * writes are kept apart too: Anthropic bills them above the input price.
 */
function mapUsage(usage: AnthropicUsage | null | undefined): Usage | null {
  // A usage object without counts (`{}`) reports nothing.
  if (usage == null || (usage.input_tokens == null && usage.output_tokens == null)) return null;
  const cacheRead = usage.cache_read_input_tokens ?? null;
  const cacheWrite = usage.cache_creation_input_tokens ?? null;
  return {
    promptTokens: (usage.input_tokens ?? 0) + (cacheRead ?? 0) + (cacheWrite ?? 0),
    completionTokens: usage.output_tokens ?? 0,
    cachedTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    reasoningTokens: null,
  };
}

/** message_delta carries cumulative counts; later values win, absent ones keep the earlier report. */
function mergeUsage(earlier: AnthropicUsage, later: AnthropicUsage): AnthropicUsage {
  return {
    input_tokens: later.input_tokens ?? earlier.input_tokens,
    output_tokens: later.output_tokens ?? earlier.output_tokens,
    cache_creation_input_tokens: later.cache_creation_input_tokens ?? earlier.cache_creation_input_tokens,
    cache_read_input_tokens: later.cache_read_input_tokens ?? earlier.cache_read_input_tokens,
  };
}
