/**
 * Completions and chat completions answers, whole or streamed, → call parts. A stream ends at
 * `[DONE]` (the body is still read to its end, so the connection goes back to the pool), or
 * without it once every choice finished. Usage may come in a last chunk (include_usage) or
 * cumulatively on several chunks: the last one seen is yielded once, at the end.
 */
import type { z } from 'zod';
import type { CallPart } from '../shared/call-part.js';
import { decodeSseBody } from '../shared/decode-sse-body.js';
import { malformedUpstream, upstreamStreamError } from '../shared/map-upstream-error.js';
import { parseUpstreamJson } from '../shared/parse-upstream-json.js';
import type { FinishReason, TokenLogprob, Usage } from '../types.js';
import { openaiChatSchema, openaiCompletionSchema, type OpenAIChat, type OpenAICompletion, type OpenAILogprobs } from './openai-compatible-api.js';

/** How one of the two endpoints' bodies is read; `whole` is false for a stream chunk. */
interface ResponseFormat<Body extends OpenAICompletion | OpenAIChat> {
  schema: z.ZodType<Body>;
  /** Names a whole answer in the 502 for one in an unexpected shape. */
  what: string;
  choices(vendor: string, body: Body, whole: boolean, out: CallPart[]): void;
  usage(body: Body): Usage | null;
}

export const completionFormat: ResponseFormat<OpenAICompletion> = {
  schema: openaiCompletionSchema,
  what: 'a completion',
  choices(vendor, body, whole, out) {
    for (const choice of body.choices ?? []) {
      const index = choice.index ?? 0;
      const logprobs = mapLogprobs(choice.logprobs);
      // An echoed empty prompt has logprobs and no text.
      if (logprobs) out.push({ type: 'text-delta', choice: index, text: choice.text ?? '', logprobs });
      else if (choice.text) out.push({ type: 'text-delta', choice: index, text: choice.text });
      if (whole || choice.finish_reason) out.push({ type: 'finish', choice: index, finishReason: mapFinishReason(vendor, choice.finish_reason) });
    }
  },
  usage: (body) => mapUsage(body.usage),
};

export const chatFormat: ResponseFormat<OpenAIChat> = {
  schema: openaiChatSchema,
  what: 'a chat completion',
  choices(vendor, body, whole, out) {
    for (const choice of body.choices ?? []) {
      const index = choice.index ?? 0;
      const content = whole ? choice.message?.content : choice.delta?.content;
      const logprobs = mapChatLogprobs(choice.logprobs?.content);
      if (logprobs) out.push({ type: 'text-delta', choice: index, text: content ?? '', logprobs });
      else if (content) out.push({ type: 'text-delta', choice: index, text: content });
      if (whole || choice.finish_reason) out.push({ type: 'finish', choice: index, finishReason: mapFinishReason(vendor, choice.finish_reason) });
    }
  },
  // Groq reports usage under x_groq.
  usage: (body) => mapUsage(body.usage ?? body.x_groq?.usage),
};

export function responseParts<Body extends OpenAICompletion | OpenAIChat>(vendor: string, format: ResponseFormat<Body>, text: string): CallPart[] {
  const body = parseUpstreamJson(vendor, format.schema, text, format.what);
  if (body.error) throw upstreamStreamError(vendor, body.error.message ?? null);
  const parts: CallPart[] = [];
  if (body.system_fingerprint) parts.push({ type: 'metadata', systemFingerprint: body.system_fingerprint });
  format.choices(vendor, body, true, parts);
  const usage = format.usage(body);
  if (usage) parts.push({ type: 'usage', usage });
  return parts;
}

export function streamParts<Body extends OpenAICompletion | OpenAIChat>(
  vendor: string,
  format: ResponseFormat<Body>,
  body: AsyncIterable<Buffer>,
  choiceCount: number,
): AsyncGenerator<CallPart[]> {
  let usage: Usage | null = null;
  let fingerprintSent = false;
  const finished = new Set<number>();
  let done = false;
  return decodeSseBody(vendor, body, {
    event({ data }, out) {
      if (done) return;
      if (data === '[DONE]') {
        done = true;
        return;
      }
      const chunk = parseUpstreamJson(vendor, format.schema, data, 'a broken stream chunk');
      if (chunk.error) throw upstreamStreamError(vendor, chunk.error.message ?? null);
      if (chunk.system_fingerprint && !fingerprintSent) {
        fingerprintSent = true;
        out.push({ type: 'metadata', systemFingerprint: chunk.system_fingerprint });
      }
      const from = out.length;
      format.choices(vendor, chunk, false, out);
      for (let index = from; index < out.length; index++) {
        const part = out[index];
        if (part.type === 'finish') finished.add(part.choice);
      }
      usage = format.usage(chunk) ?? usage;
    },
    end(out) {
      if (!done && finished.size < choiceCount) throw malformedUpstream(vendor, 'a stream that ended before every choice finished');
      if (usage) out.push({ type: 'usage', usage });
    },
  });
}

/** Tool and function calls cannot occur here and read as a normal stop. */
/** OpenAI's finish reasons; vLLM's `abort` (its engine dropped the request) is a cut-off answer, not a finished one. */
function mapFinishReason(vendor: string, reason: string | null | undefined): FinishReason {
  if (reason === 'abort') throw upstreamStreamError(vendor, 'it aborted the answer before it finished');
  return reason === 'length' || reason === 'content_filter' ? reason : 'stop';
}

/** The parallel arrays of the completions `logprobs` object, as one entry per token. */
function mapLogprobs(logprobs: OpenAILogprobs | null | undefined): TokenLogprob[] | undefined {
  const tokens = logprobs?.tokens;
  if (!tokens || tokens.length === 0) return undefined;
  return tokens.map((token, index) => ({
    token,
    logprob: logprobs.token_logprobs?.[index] ?? null,
    topLogprobs: logprobs.top_logprobs?.[index] ?? null,
  }));
}

/** Chat's logprobs (an entry per token, alternatives as a list) as the gateway's token logprobs. */
function mapChatLogprobs(content: NonNullable<NonNullable<OpenAIChat['choices']>[number]['logprobs']>['content']): TokenLogprob[] | undefined {
  if (!content || content.length === 0) return undefined;
  return content.map((entry) => ({
    token: entry.token,
    logprob: entry.logprob,
    topLogprobs: entry.top_logprobs ? Object.fromEntries(entry.top_logprobs.map((alternative) => [alternative.token, alternative.logprob])) : null,
  }));
}

/** The vendor's counts, or null for a usage object without them (`{}`), which reports nothing. */
function mapUsage(usage: OpenAICompletion['usage']): Usage | null {
  if (usage == null || (usage.prompt_tokens == null && usage.completion_tokens == null)) return null;
  return {
    promptTokens: usage.prompt_tokens ?? 0,
    completionTokens: usage.completion_tokens ?? 0,
    cachedTokens: usage.prompt_tokens_details?.cached_tokens ?? usage.prompt_cache_hit_tokens ?? null,
    reasoningTokens: usage.completion_tokens_details?.reasoning_tokens ?? null,
    audioPromptTokens: usage.prompt_tokens_details?.audio_tokens ?? null,
    audioCompletionTokens: usage.completion_tokens_details?.audio_tokens ?? null,
    acceptedPredictionTokens: usage.completion_tokens_details?.accepted_prediction_tokens ?? null,
    rejectedPredictionTokens: usage.completion_tokens_details?.rejected_prediction_tokens ?? null,
  };
}
