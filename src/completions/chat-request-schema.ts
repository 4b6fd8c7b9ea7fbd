/**
 * The request schema of POST /v5/chat/completions: OpenAI's chat completions, text conversations.
 * Sampling parameters take the same values as on /v5/completions. What the gateway cannot carry to
 * every vendor yet (tools, structured output, audio, images) is refused by name, never ignored.
 */
import { z } from 'zod';
import { completionRequestSchema, integerIn, parameterMessages } from './completion-request-schema.js';

export const chatMessages = {
  messages: "'messages' must be a list of at least one message, each with a 'role' (system, developer, user or assistant) and text 'content'.",
  content: '\'content\' must be a string or a list of text parts ({"type": "text", "text": "…"}).',
  top_logprobs: "'top_logprobs' must be an integer from 0 to 20, and needs 'logprobs': true.",
  logprobs: "'logprobs' must be a boolean.",
  max_tokens: `'max_tokens' must be an integer from 1 to ${2 ** 31 - 1}.`,
  max_completion_tokens: `'max_completion_tokens' must be an integer from 1 to ${2 ** 31 - 1}.`,
} as const;

/** Fields of OpenAI's chat completions that the gateway refuses, each with the reason a client reads. */
export const unsupportedChatFields: Record<string, string> = {
  tools: 'tool calling is not available through this gateway yet',
  tool_choice: 'tool calling is not available through this gateway yet',
  parallel_tool_calls: 'tool calling is not available through this gateway yet',
  functions: 'function calling is not available through this gateway yet',
  function_call: 'function calling is not available through this gateway yet',
  response_format: 'structured output is not available through this gateway yet',
  audio: 'audio output is not available through this gateway',
  modalities: 'only text output is available through this gateway',
  prediction: 'predicted outputs are not available through this gateway',
  web_search_options: 'web search is not available through this gateway',
};

const text = z.string({ error: chatMessages.content });
const content = z.union([text, z.array(z.strictObject({ type: z.literal('text'), text }), { error: chatMessages.content }).min(1)], {
  error: chatMessages.content,
});

const message = z.object(
  {
    role: z.enum(['system', 'developer', 'user', 'assistant'], { error: chatMessages.messages }),
    content,
    name: z.string().max(256).nullish(),
  },
  { error: chatMessages.messages },
);

const completion = completionRequestSchema.shape;

export const chatRequestSchema = z.strictObject(
  {
    model: completion.model,
    messages: z.array(message, { error: chatMessages.messages }).min(1, { error: chatMessages.messages }).max(2048, { error: chatMessages.messages }),
    frequency_penalty: completion.frequency_penalty,
    logit_bias: completion.logit_bias,
    logprobs: z.boolean({ error: chatMessages.logprobs }).nullish(),
    top_logprobs: integerIn(chatMessages.top_logprobs, 0, 20).nullish(),
    max_tokens: integerIn(chatMessages.max_tokens, 1, 2 ** 31 - 1).nullish(),
    max_completion_tokens: integerIn(chatMessages.max_completion_tokens, 1, 2 ** 31 - 1).nullish(),
    n: completion.n,
    presence_penalty: completion.presence_penalty,
    seed: completion.seed,
    stop: completion.stop,
    stream: completion.stream,
    stream_options: completion.stream_options,
    temperature: completion.temperature,
    top_p: completion.top_p,
    user: completion.user,
    // Accepted and without effect here, as they change nothing in the answer.
    store: z.boolean().nullish(),
    metadata: z.record(z.string(), z.string()).nullish(),
    service_tier: z.string().nullish(),
  },
  { error: parameterMessages.body },
);

export type ChatRequestBody = z.infer<typeof chatRequestSchema>;
