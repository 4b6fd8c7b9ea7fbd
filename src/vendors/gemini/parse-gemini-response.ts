/** GenerateContentResponses (whole or as SSE chunks) → call parts (one choice per call). */
import type { CallPart } from '../shared/call-part.js';
import { malformedUpstream } from '../shared/map-upstream-error.js';
import { parseUpstreamJson } from '../shared/parse-upstream-json.js';
import { decodeSseBody } from '../shared/decode-sse-body.js';
import type { FinishReason, Usage } from '../types.js';
import type { VendorError } from '../../errors/vendor-error.js';
import { describeGeminiError } from './extract-gemini-error.js';
import { geminiResponseSchema, type GeminiResponse } from './gemini-api.js';
import { mapGeminiFinishReason } from './map-gemini-finish-reason.js';
import { mapGeminiUsage } from './map-gemini-usage.js';

/** Builds the VendorError for an error Gemini reports inside an answer or a stream chunk. */
export type GeminiFailure = (status: number, message: string | null, retryAfterSeconds: number | null) => VendorError;

interface State {
  finish: FinishReason | null;
  usage: Usage | null;
}

/** usageMetadata is cumulative on every chunk: the last one is the call's usage. */
function consume(response: GeminiResponse, state: State, failure: GeminiFailure, out: CallPart[]): void {
  if (response.error) {
    const described = describeGeminiError(response.error);
    throw failure(described.status ?? response.error.code ?? 500, described.message, described.retryAfterSeconds ?? null);
  }
  const usage = response.usageMetadata ? mapGeminiUsage(response.usageMetadata) : null;
  if (usage) {
    state.usage = usage;
    out.push({ type: 'usage-progress', usage });
  }
  const candidate = response.candidates?.[0];
  for (const part of candidate?.content?.parts ?? []) {
    // Thought summaries are not completion text (and only appear when asked for).
    if (part.text && !part.thought) out.push({ type: 'text-delta', choice: 0, text: part.text });
  }
  if (candidate?.finishReason) state.finish = mapGeminiFinishReason(candidate.finishReason);
  else if (!candidate && response.promptFeedback?.blockReason) state.finish = 'content_filter';
}

function finish(vendor: string, state: State, out: CallPart[]): void {
  if (state.finish === null) throw malformedUpstream(vendor, 'a response that ended without a finish reason');
  out.push({ type: 'finish', choice: 0, finishReason: state.finish });
  if (state.usage) out.push({ type: 'usage', usage: state.usage });
}

export function geminiResponseParts(vendor: string, text: string, failure: GeminiFailure): CallPart[] {
  const state: State = { finish: null, usage: null };
  const out: CallPart[] = [];
  consume(parseUpstreamJson(vendor, geminiResponseSchema, text, 'a response'), state, failure, out);
  finish(vendor, state, out);
  return out;
}

export function geminiStreamParts(vendor: string, body: AsyncIterable<Buffer>, failure: GeminiFailure): AsyncGenerator<CallPart[]> {
  const state: State = { finish: null, usage: null };
  return decodeSseBody(vendor, body, {
    event: (event, out) => consume(parseUpstreamJson(vendor, geminiResponseSchema, event.data, 'a broken stream chunk'), state, failure, out),
    end: (out) => finish(vendor, state, out),
  });
}
