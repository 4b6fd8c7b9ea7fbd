/** GenerateContentResponses (whole or as SSE chunks) and error bodies → call parts (one choice per call). */
import type { CallPart } from '../shared/call-part.js';
import { decodeSseBody } from '../shared/decode-sse-body.js';
import { malformedUpstream } from '../shared/map-upstream-error.js';
import { parseUpstreamJson, tryParseJson } from '../shared/parse-upstream-json.js';
import type { VendorFailure } from '../shared/single-choice-adapter.js';
import type { ExtractedError } from '../shared/upstream-client.js';
import type { FinishReason, Usage } from '../types.js';
import { geminiErrorBodySchema, geminiResponseSchema, type GeminiError, type GeminiResponse, type GeminiUsage } from './gemini-api.js';

interface State {
  finish: FinishReason | null;
  usage: Usage | null;
}

/** usageMetadata is cumulative on every chunk: the last one is the call's usage. */
function consume(response: GeminiResponse, state: State, failure: VendorFailure, out: CallPart[]): void {
  if (response.error) {
    const described = describeGeminiError(response.error);
    throw failure(described.status ?? response.error.code ?? 500, described.message, described.retryAfterSeconds ?? null);
  }
  const usage = response.usageMetadata ? mapUsage(response.usageMetadata) : null;
  if (usage) {
    state.usage = usage;
    out.push({ type: 'usage-progress', usage });
  }
  const candidate = response.candidates?.[0];
  for (const part of candidate?.content?.parts ?? []) {
    // Thought summaries are not completion text (and only appear when asked for).
    if (part.text && !part.thought) out.push({ type: 'text-delta', choice: 0, text: part.text });
  }
  if (candidate?.finishReason) state.finish = mapFinishReason(candidate.finishReason);
  else if (!candidate && response.promptFeedback?.blockReason) state.finish = 'content_filter';
}

function finish(vendor: string, state: State, out: CallPart[]): void {
  if (state.finish === null) throw malformedUpstream(vendor, 'a response that ended without a finish reason');
  out.push({ type: 'finish', choice: 0, finishReason: state.finish });
  if (state.usage) out.push({ type: 'usage', usage: state.usage });
}

export function geminiResponseParts(vendor: string, text: string, failure: VendorFailure): CallPart[] {
  const state: State = { finish: null, usage: null };
  const out: CallPart[] = [];
  consume(parseUpstreamJson(vendor, geminiResponseSchema, text, 'a response'), state, failure, out);
  finish(vendor, state, out);
  return out;
}

export function geminiStreamParts(vendor: string, body: AsyncIterable<Buffer>, failure: VendorFailure): AsyncGenerator<CallPart[]> {
  const state: State = { finish: null, usage: null };
  return decodeSseBody(vendor, body, {
    event: (event, out) => consume(parseUpstreamJson(vendor, geminiResponseSchema, event.data, 'a broken stream chunk'), state, failure, out),
    end: (out) => finish(vendor, state, out),
  });
}

export function extractGeminiError(text: string): ExtractedError {
  const error = tryParseJson(geminiErrorBodySchema, text)?.error;
  return error ? describeGeminiError(error) : { message: null };
}

/**
 * Gemini answers an invalid key with 400 INVALID_ARGUMENT / API_KEY_INVALID: that is the gateway's
 * credential problem, not the client's request, so it is reported as 401 (→ 502). Likewise 400
 * FAILED_PRECONDITION says the gateway's project lacks billing, whatever the request. RetryInfo's
 * retryDelay ("37s") stands in for a missing retry-after header.
 */
function describeGeminiError(error: GeminiError): ExtractedError {
  const details = error.details ?? [];
  const keyInvalid = details.some((detail) => detail.reason === 'API_KEY_INVALID');
  const delay = details.find((detail) => detail.retryDelay)?.retryDelay;
  const seconds = delay ? Number.parseFloat(delay) : Number.NaN;
  return {
    message: error.message ?? error.status ?? null,
    ...(keyInvalid ? { status: 401 } : {}),
    ...(error.status === 'FAILED_PRECONDITION' ? { quotaExhausted: true } : {}),
    ...(Number.isFinite(seconds) ? { retryAfterSeconds: seconds } : {}),
  };
}

const filtered = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']);

function mapFinishReason(reason: string): FinishReason {
  if (reason === 'MAX_TOKENS') return 'length';
  if (filtered.has(reason)) return 'content_filter';
  // STOP, OTHER, LANGUAGE, FINISH_REASON_UNSPECIFIED, MALFORMED_FUNCTION_CALL: generation ended.
  return 'stop';
}

/**
 * promptTokenCount already includes cached content; thoughts are billed as output, so they are
 * completion tokens and also reported as reasoning tokens.
 */
function mapUsage(usage: GeminiUsage): Usage | null {
  // usageMetadata without counts (`{}`) reports nothing.
  if (usage.promptTokenCount == null && usage.candidatesTokenCount == null) return null;
  const thoughts = usage.thoughtsTokenCount ?? null;
  return {
    promptTokens: (usage.promptTokenCount ?? 0) + (usage.toolUsePromptTokenCount ?? 0),
    completionTokens: (usage.candidatesTokenCount ?? 0) + (thoughts ?? 0),
    cachedTokens: usage.cachedContentTokenCount ?? null,
    reasoningTokens: thoughts,
  };
}
