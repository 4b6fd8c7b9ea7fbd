/** The wire objects of the legacy completions API: the Completion and its stream chunks. */
import type { FinishReason, Usage } from '../vendors/types.js';
import { isAscii, plainAscii, plainWide, textKind } from '../vendors/shared/json-string.js';

export interface ChoiceLogprobs {
  tokens: string[];
  token_logprobs: (number | null)[];
  top_logprobs: (Record<string, number> | null)[];
  text_offset: number[];
}

export interface CompletionChoice {
  text: string;
  index: number;
  logprobs: ChoiceLogprobs | null;
  finish_reason: FinishReason | null;
}

export interface CompletionUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  completion_tokens_details: {
    accepted_prediction_tokens: number;
    audio_tokens: number;
    reasoning_tokens: number;
    rejected_prediction_tokens: number;
  };
  prompt_tokens_details: { audio_tokens: number; cached_tokens: number };
}

export interface Completion {
  id: string;
  object: 'text_completion';
  created: number;
  model: string;
  system_fingerprint: string | null;
  choices: CompletionChoice[];
  usage?: CompletionUsage | null;
}

export function toWireUsage(usage: Usage): CompletionUsage {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    completion_tokens_details: {
      accepted_prediction_tokens: usage.acceptedPredictionTokens ?? 0,
      audio_tokens: usage.audioCompletionTokens ?? 0,
      reasoning_tokens: usage.reasoningTokens ?? 0,
      rejected_prediction_tokens: usage.rejectedPredictionTokens ?? 0,
    },
    prompt_tokens_details: { audio_tokens: usage.audioPromptTokens ?? 0, cached_tokens: usage.cachedTokens ?? 0 },
  };
}

/**
 * `JSON.stringify(usage)`, written field by field: the stream's closing usage chunk. Its shape is
 * fixed and every value is a number, so a template gives the same text without the serialiser's
 * walk over two nested objects (0.8% of a stream's CPU in a profile). A value JSON cannot write as
 * a number (not finite) falls back to the serialiser, which writes `null`.
 */
export function usageJson(usage: CompletionUsage): string {
  const completion = usage.completion_tokens_details;
  const prompt = usage.prompt_tokens_details;
  // The sum is finite only when every value is (it can also overflow, which only costs the fallback).
  const sum = usage.prompt_tokens + usage.completion_tokens + usage.total_tokens + completion.accepted_prediction_tokens + completion.audio_tokens + completion.reasoning_tokens + completion.rejected_prediction_tokens + prompt.audio_tokens + prompt.cached_tokens;
  if (!Number.isFinite(sum)) return JSON.stringify(usage);
  return `{"prompt_tokens":${usage.prompt_tokens},"completion_tokens":${usage.completion_tokens},"total_tokens":${usage.total_tokens},"completion_tokens_details":{"accepted_prediction_tokens":${completion.accepted_prediction_tokens},"audio_tokens":${completion.audio_tokens},"reasoning_tokens":${completion.reasoning_tokens},"rejected_prediction_tokens":${completion.rejected_prediction_tokens}},"prompt_tokens_details":{"audio_tokens":${prompt.audio_tokens},"cached_tokens":${prompt.cached_tokens}}}`;
}

/** The text of a non-stream answer, and whether it is all ASCII (then latin1 writes the same bytes as UTF-8). */
export interface CompletionText {
  text: string;
  ascii: boolean;
}

/**
 * `JSON.stringify(completion)`, written field by field: the non-stream answer. The serialiser cost
 * ~25k instructions for this one object (7.5% of a non-stream request under callgrind); its shape
 * is fixed, so a template writes the same text. A string goes in as it is when JSON would write it
 * so (`textKind`), through `JSON.stringify` otherwise; logprobs (rare, and large) go through
 * `JSON.stringify` whole. A property test holds the text to `JSON.stringify`'s.
 */
export function completionJson(completion: Completion): CompletionText {
  allAscii = true;
  let choices = '';
  for (let index = 0; index < completion.choices.length; index++) {
    const choice = completion.choices[index];
    let logprobs = 'null';
    if (choice.logprobs !== null) {
      logprobs = JSON.stringify(choice.logprobs);
      if (!isAscii(logprobs)) allAscii = false;
    }
    const finish = choice.finish_reason === null ? 'null' : quoted(choice.finish_reason);
    choices += `${index === 0 ? '' : ','}{"text":${quoted(choice.text)},"index":${numberJson(choice.index)},"logprobs":${logprobs},"finish_reason":${finish}}`;
  }
  const fingerprint = completion.system_fingerprint === null ? 'null' : quoted(completion.system_fingerprint);
  const usage = completion.usage === undefined ? '' : `,"usage":${completion.usage === null ? 'null' : usageJson(completion.usage)}`;
  const text = `{"id":${quoted(completion.id)},"object":"text_completion","created":${numberJson(completion.created)},"model":${quoted(completion.model)},"system_fingerprint":${fingerprint},"choices":[${choices}]${usage}}`;
  return { text, ascii: allAscii };
}

/** Whether every string `quoted` wrote since `completionJson` began was ASCII. */
let allAscii = true;

function quoted(value: string): string {
  const kind = textKind(value);
  if (kind === plainAscii) return `"${value}"`;
  if (kind === plainWide) {
    allAscii = false;
    return `"${value}"`;
  }
  const text = JSON.stringify(value);
  if (!isAscii(text)) allAscii = false;
  return text;
}

function numberJson(value: number): string {
  return Number.isFinite(value) ? `${value}` : 'null';
}
