/**
 * The vendors' wire formats as mock upstream replies, shared by the tests: OpenAI completions,
 * OpenAI chat completions, Anthropic Messages and Gemini generateContent. Each builds a whole
 * answer, a stream (OpenAI's ends with the usage chunk that `stream_options.include_usage` asks
 * for, Gemini's is framed with CRLF as Google sends it), a stream that breaks or hangs after its
 * first output, and an error in the vendor's own shape. Envelopes (ids, models, fingerprints)
 * follow the recorded answers in `test/fixtures/`. `usage: null` plays a vendor that reports none.
 */
import { sse, type Reply } from './mock-upstream.js';

/** What the vendor bills for one call. */
export interface Billed {
  prompt: number;
  completion: number;
  /** Prompt tokens the vendor read from its cache (part of `prompt`). */
  cached?: number;
}

/** One upstream answer: a text per choice, and the usage the vendor reports (or none). */
export interface WireAnswer {
  /** Per choice, its text (a stream sends it in two pieces) or the pieces a stream sends. */
  texts: (string | string[])[];
  usage: Billed | null;
  /** Per choice, the vendor's own finish reason; by default its plain end (`stop`, `end_turn`, `STOP`). */
  finishReasons?: string[];
}

/** How a stream is played (see `Reply`). */
export interface StreamOptions {
  headers?: Record<string, string>;
  delayMs?: number;
  hang?: boolean;
  destroyAfter?: boolean;
}

export interface WireFormat {
  name: string;
  /** Whether the format reports the prompt count before the end of a stream. */
  reportsPromptEarly: boolean;
  /** The whole answer's body. */
  body(answer: WireAnswer): unknown;
  /** The stream's events, raw, in order. */
  events(answer: WireAnswer): string[];
  json(answer: WireAnswer): Reply;
  stream(answer: WireAnswer, options?: StreamOptions): Reply;
  /** The first piece of output (and the prompt count, where the format reports it early), then the connection breaks. */
  breakAfterOutput(text: string, usage: Billed): Reply;
  /** The first piece of output (as above), then nothing more. */
  hangAfterOutput(text: string, usage: Billed): Reply;
  /** The vendor's error body for an HTTP status. */
  errorBody(status: number, message: string): unknown;
  error(status: number, message: string, headers?: Record<string, string>): Reply;
}

interface WireDefinition {
  name: string;
  reportsPromptEarly: boolean;
  body(answer: WireAnswer): unknown;
  events(answer: WireAnswer): string[];
  /** A stream's events up to and including its first output. */
  firstOutput(text: string, usage: Billed): string[];
  errorBody(status: number, message: string): unknown;
}

function wire(definition: WireDefinition): WireFormat {
  return {
    ...definition,
    json: (answer) => ({ json: definition.body(answer) }),
    stream: (answer, options = {}) => ({ chunks: definition.events(answer), ...options }),
    breakAfterOutput: (text, usage) => ({ chunks: definition.firstOutput(text, usage), destroyAfter: true }),
    hangAfterOutput: (text, usage) => ({ chunks: definition.firstOutput(text, usage), hang: true }),
    error: (status, message, headers) => ({ status, headers, json: definition.errorBody(status, message) }),
  };
}

/** A choice's stream pieces: the ones given, or its text in two, so that streams carry several deltas per choice. */
function pieces(text: string | string[]): string[] {
  if (Array.isArray(text)) return text;
  const middle = Math.ceil(text.length / 2);
  const halves = [text.slice(0, middle), text.slice(middle)].filter((piece) => piece.length > 0);
  return halves.length > 0 ? halves : [''];
}

const whole = (text: string | string[]) => (Array.isArray(text) ? text.join('') : text);
const finishOf = (answer: WireAnswer, index: number, plain: string) => answer.finishReasons?.[index] ?? plain;

const openaiUsage = (usage: Billed) => ({
  prompt_tokens: usage.prompt,
  completion_tokens: usage.completion,
  total_tokens: usage.prompt + usage.completion,
  ...(usage.cached === undefined ? {} : { prompt_tokens_details: { cached_tokens: usage.cached } }),
});

/** With include_usage honoured every chunk carries `usage: null` until the usage chunk; a server that ignores it sends neither. */
const usageField = (usage: Billed | null) => (usage ? { usage: null } : {});

const openaiErrorKinds: Record<number, [string, string | null]> = {
  400: ['invalid_request_error', null],
  401: ['invalid_request_error', 'invalid_api_key'],
  403: ['request_forbidden', 'unsupported_country_region_territory'],
  404: ['invalid_request_error', 'model_not_found'],
  429: ['requests', 'rate_limit_exceeded'],
};

function openaiErrorBody(status: number, message: string) {
  const [type, code] = openaiErrorKinds[status] ?? [status < 500 ? 'invalid_request_error' : 'server_error', null];
  return { error: { message, type, param: null, code } };
}

const completion = {
  id: 'cmpl-AXq7rTb2kVm9LcP0sWd4Hn1Ye',
  object: 'text_completion',
  created: 1731400000,
  model: 'gpt-3.5-turbo-instruct',
  system_fingerprint: 'fp_0ba0d124f1',
};
const completionChunk = (usage: Billed | null, index: number, text: string, finish: string | null) =>
  sse({ ...completion, choices: [{ text, index, logprobs: null, finish_reason: finish }], ...usageField(usage) });

export const openaiCompletions = wire({
  name: 'openai completions',
  reportsPromptEarly: false,
  body: (answer) => ({
    ...completion,
    choices: answer.texts.map((text, index) => ({ text: whole(text), index, logprobs: null, finish_reason: finishOf(answer, index, 'stop') })),
    ...(answer.usage ? { usage: openaiUsage(answer.usage) } : {}),
  }),
  events: (answer) => [
    ...answer.texts.flatMap((text, index) => pieces(text).map((piece) => completionChunk(answer.usage, index, piece, null))),
    ...answer.texts.map((_, index) => completionChunk(answer.usage, index, '', finishOf(answer, index, 'stop'))),
    ...(answer.usage ? [sse({ ...completion, choices: [], usage: openaiUsage(answer.usage) })] : []),
    'data: [DONE]\n\n',
  ],
  firstOutput: (text, usage) => [completionChunk(usage, 0, text, null)],
  errorBody: openaiErrorBody,
});

const chat = {
  id: 'chatcmpl-AXq8Fz3nUe6KbR2tMw9Jd5Lp0',
  object: 'chat.completion.chunk',
  created: 1731400010,
  model: 'gpt-4o-mini-2024-07-18',
  system_fingerprint: 'fp_9b78b61c52',
};
const chatChunk = (usage: Billed | null, index: number, delta: Record<string, unknown>, finish: string | null) =>
  sse({ ...chat, choices: [{ index, delta, logprobs: null, finish_reason: finish }], ...usageField(usage) });
const roleDelta = { role: 'assistant', content: '', refusal: null };

export const openaiChat = wire({
  name: 'openai chat',
  reportsPromptEarly: false,
  body: (answer) => ({
    ...chat,
    object: 'chat.completion',
    choices: answer.texts.map((text, index) => ({
      index,
      message: { role: 'assistant', content: whole(text), refusal: null },
      logprobs: null,
      finish_reason: finishOf(answer, index, 'stop'),
    })),
    ...(answer.usage ? { usage: openaiUsage(answer.usage) } : {}),
  }),
  events: (answer) => [
    ...answer.texts.flatMap((text, index) => [
      chatChunk(answer.usage, index, roleDelta, null),
      ...pieces(text).map((piece) => chatChunk(answer.usage, index, { content: piece }, null)),
    ]),
    ...answer.texts.map((_, index) => chatChunk(answer.usage, index, {}, finishOf(answer, index, 'stop'))),
    ...(answer.usage ? [sse({ ...chat, choices: [], usage: openaiUsage(answer.usage) })] : []),
    'data: [DONE]\n\n',
  ],
  firstOutput: (text, usage) => [chatChunk(usage, 0, roleDelta, null), chatChunk(usage, 0, { content: text }, null)],
  errorBody: openaiErrorBody,
});

/** Anthropic's input_tokens leaves out cache reads, which it reports beside them. */
const anthropicUsage = (usage: Billed | null, output: number) =>
  usage
    ? {
        input_tokens: usage.prompt - (usage.cached ?? 0),
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: usage.cached ?? 0,
        output_tokens: output,
      }
    : {};
const message = { id: 'msg_01XFDUDYJgAACzvnptvVoYEL', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5-20250929' };
const anthropicOpening = (usage: Billed | null) => [
  sse(
    { type: 'message_start', message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: anthropicUsage(usage, 1) } },
    'message_start',
  ),
  sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start'),
  sse({ type: 'ping' }, 'ping'),
];
const anthropicDelta = (text: string) => sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }, 'content_block_delta');

const anthropicErrorTypes: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

export const anthropicMessages = wire({
  name: 'anthropic messages',
  reportsPromptEarly: true,
  body: (answer) => ({
    ...message,
    content: [{ type: 'text', text: whole(answer.texts[0]) }],
    stop_reason: finishOf(answer, 0, 'end_turn'),
    stop_sequence: null,
    usage: anthropicUsage(answer.usage, answer.usage?.completion ?? 0),
  }),
  events: (answer) => [
    ...anthropicOpening(answer.usage),
    ...pieces(answer.texts[0]).map(anthropicDelta),
    sse({ type: 'content_block_stop', index: 0 }, 'content_block_stop'),
    sse(
      {
        type: 'message_delta',
        delta: { stop_reason: finishOf(answer, 0, 'end_turn'), stop_sequence: null },
        usage: answer.usage ? { output_tokens: answer.usage.completion } : {},
      },
      'message_delta',
    ),
    sse({ type: 'message_stop' }, 'message_stop'),
  ],
  firstOutput: (text, usage) => [...anthropicOpening(usage), anthropicDelta(text)],
  errorBody: (status, message) => ({ type: 'error', error: { type: anthropicErrorTypes[status] ?? 'api_error', message } }),
});

/** Google's own JSON spacing (`{"a": 1,"b": 2}`), as its streams carry it. */
function googleJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(googleJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([key, item]) => `${JSON.stringify(key)}: ${googleJson(item)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** usageMetadata: the prompt count alone while generating, everything on the last chunk. */
function geminiUsage(usage: Billed, final: boolean) {
  return {
    promptTokenCount: usage.prompt,
    ...(final ? { candidatesTokenCount: usage.completion } : {}),
    totalTokenCount: usage.prompt + (final ? usage.completion : 0),
    ...(usage.cached === undefined ? {} : { cachedContentTokenCount: usage.cached }),
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: usage.prompt }],
  };
}

const geminiResponse = (text: string, finish: string | null, usage: Record<string, unknown> | null) => ({
  candidates: [{ content: { parts: [{ text }], role: 'model' }, ...(finish ? { finishReason: finish } : {}), index: 0 }],
  ...(usage ? { usageMetadata: usage } : {}),
  modelVersion: 'gemini-2.5-flash',
  responseId: 'mK4zaPnLBqWqz7IPkd6A0QM',
});
const geminiEvent = (response: unknown) => `data: ${googleJson(response)}\r\n\r\n`;

const geminiStatuses: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export const geminiGenerateContent = wire({
  name: 'gemini generateContent',
  reportsPromptEarly: true,
  body: (answer) => geminiResponse(whole(answer.texts[0]), finishOf(answer, 0, 'STOP'), answer.usage ? geminiUsage(answer.usage, true) : null),
  events: (answer) => {
    const parts = pieces(answer.texts[0]);
    return parts.map((piece, index) => {
      const last = index === parts.length - 1;
      return geminiEvent(geminiResponse(piece, last ? finishOf(answer, 0, 'STOP') : null, answer.usage ? geminiUsage(answer.usage, last) : null));
    });
  },
  firstOutput: (text, usage) => [geminiEvent(geminiResponse(text, null, geminiUsage(usage, false)))],
  errorBody: (status, message) => ({ error: { code: status, message, status: geminiStatuses[status] ?? 'UNKNOWN' } }),
});
