/**
 * Validates a chat completions body and normalises it into the same GenerationRequest a text
 * completion becomes: the conversation in `messages`, and its transcript as the one prompt, which
 * the gateway counts and which a model without a chat endpoint (the built-in one) continues.
 */
import { invalidRequest } from '../errors/gateway-error.js';
import type { ChatMessage } from '../vendors/types.js';
import { type ChatRequestBody, chatRequestSchema, unsupportedChatFields } from './chat-request-schema.js';
import { checkStreamOptions, type ParsedCompletionRequest, samplingOf, toValidationError } from './parse-completion-request.js';

export function parseChatRequest(body: unknown): ParsedCompletionRequest {
  refuseUnsupportedFields(body);
  const result = chatRequestSchema.safeParse(withoutPlainTextFormat(body));
  if (!result.success) throw toValidationError(result.error, body);
  const request = result.data;
  checkStreamOptions(request);
  if (request.max_tokens != null && request.max_completion_tokens != null && request.max_tokens !== request.max_completion_tokens) {
    throw invalidRequest("Give 'max_completion_tokens' or 'max_tokens', not two different values.", 'max_tokens');
  }
  if (request.top_logprobs != null && request.logprobs !== true) throw invalidRequest("'top_logprobs' needs 'logprobs': true.", 'top_logprobs');
  const messages = request.messages.map(toChatMessage);
  const stream = request.stream === true;
  const maxTokens = request.max_completion_tokens ?? request.max_tokens ?? null;
  return {
    api: 'chat',
    model: request.model,
    stream,
    includeUsage: stream && request.stream_options?.include_usage === true,
    maxTokensOmitted: maxTokens === null,
    generation: {
      prompts: [{ kind: 'text', text: transcript(messages) }],
      messages,
      n: request.n ?? 1,
      bestOf: null,
      // Replaced by what the context window leaves when omitted (completion-target.ts).
      maxTokens: maxTokens ?? 1,
      ...samplingOf(request),
      logprobs: request.logprobs === true ? (request.top_logprobs ?? 0) : null,
      echo: false,
      suffix: null,
      user: request.user ?? null,
      stream,
    },
  };
}

/** A field the gateway cannot carry yet is a 400 naming it, not a silent no-op. */
function refuseUnsupportedFields(body: unknown): void {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return;
  for (const [field, why] of Object.entries(unsupportedChatFields)) {
    const value = (body as Record<string, unknown>)[field];
    if (value === undefined || value === null || (field === 'response_format' && isPlainText(value))) continue;
    throw invalidRequest(`'${field}' cannot be honoured: ${why}.`, field, 'unsupported_parameter');
  }
  // An earlier turn's tool calls would otherwise be dropped from the conversation without a word.
  const messages = (body as { messages?: unknown }).messages;
  if (!Array.isArray(messages)) return;
  for (const [index, message] of messages.entries()) {
    for (const field of ['tool_calls', 'function_call'] as const) {
      if (message === null || typeof message !== 'object' || (message as Record<string, unknown>)[field] == null) continue;
      const param = `messages[${index}].${field}`;
      throw invalidRequest(
        `'${param}' cannot be honoured: ${unsupportedChatFields[field === 'tool_calls' ? 'tools' : 'functions']}.`,
        param,
        'unsupported_parameter',
      );
    }
  }
}

/** `response_format: {"type": "text"}` is the default answer format: the same as leaving it out. */
function withoutPlainTextFormat(body: unknown): unknown {
  if (body === null || typeof body !== 'object' || !('response_format' in body)) return body;
  const { response_format: _format, ...rest } = body as Record<string, unknown>;
  return rest;
}

function isPlainText(value: unknown): boolean {
  return value !== null && typeof value === 'object' && (value as { type?: unknown }).type === 'text' && Object.keys(value).length === 1;
}

/** `developer` is the newer name of `system`; text parts are joined. */
function toChatMessage(message: ChatRequestBody['messages'][number]): ChatMessage {
  const content = typeof message.content === 'string' ? message.content : message.content.map((part) => part.text).join('');
  const role = message.role === 'developer' ? 'system' : message.role;
  return message.name ? { role, content, name: message.name } : { role, content };
}

const speakers = { system: 'System', user: 'User', assistant: 'Assistant' } as const;

/** The conversation as one text, ending where the assistant speaks next (or inside its last turn, which it continues). */
export function transcript(messages: readonly ChatMessage[]): string {
  const lines = messages.map((message) => `${speakers[message.role]}: ${message.content}`);
  return messages.at(-1)?.role === 'assistant' ? lines.join('\n\n') : `${lines.join('\n\n')}\n\nAssistant:`;
}
