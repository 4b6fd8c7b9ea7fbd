/**
 * The vendors' wire formats as mock upstream replies, shared by the tests: OpenAI completions,
 * OpenAI chat completions, Anthropic Messages and Gemini generateContent, each as a whole answer,
 * a stream, a stream that breaks after its first output, and a stream that hangs after it.
 * `usage: null` plays a vendor that reports none.
 */
import { sse, type Reply } from './mock-upstream.js';

/** What the vendor bills for one call. */
export interface Billed {
  prompt: number;
  completion: number;
}

/** One upstream answer: a text per choice, and the usage the vendor reports (or none). */
export interface WireAnswer {
  texts: string[];
  usage: Billed | null;
  /** The vendor stopped at a stop sequence (rather than at the end of its text). */
  stopped?: boolean;
}

export interface WireFormat {
  name: string;
  json(answer: WireAnswer): Reply;
  stream(answer: WireAnswer): Reply;
  /** The first piece of output (and the prompt count, where the format reports it early), then the connection breaks. */
  breakAfterOutput(text: string, usage: Billed): Reply;
  /** The first piece of output (as above), then nothing more. */
  hangAfterOutput(text: string, usage: Billed): Reply;
  /** Whether the format reports the prompt count before the end of a stream. */
  reportsPromptEarly: boolean;
}

/** Each text in two pieces, so that streams carry several deltas per choice. */
function pieces(text: string): string[] {
  const middle = Math.ceil(text.length / 2);
  return [text.slice(0, middle), text.slice(middle)].filter((piece) => piece.length > 0);
}

const openaiUsage = (usage: Billed) => ({ prompt_tokens: usage.prompt, completion_tokens: usage.completion, total_tokens: usage.prompt + usage.completion });

export const openaiCompletions: WireFormat = {
  name: 'openai completions',
  reportsPromptEarly: false,
  json: (answer) => ({
    json: {
      id: 'cmpl-up',
      object: 'text_completion',
      created: 1,
      model: 'm',
      choices: answer.texts.map((text, index) => ({ text, index, logprobs: null, finish_reason: 'stop' })),
      ...(answer.usage ? { usage: openaiUsage(answer.usage) } : {}),
    },
  }),
  stream: (answer) => ({
    chunks: [
      ...answer.texts.flatMap((text, index) => pieces(text).map((piece) => sse(completionChunk(index, piece, null)))),
      ...answer.texts.map((_, index) => sse(completionChunk(index, '', 'stop'))),
      ...(answer.usage ? [sse({ id: 'cmpl-up', object: 'text_completion', created: 1, model: 'm', choices: [], usage: openaiUsage(answer.usage) })] : []),
      'data: [DONE]\n\n',
    ],
  }),
  breakAfterOutput: (text) => ({ chunks: [sse(completionChunk(0, text, null))], destroyAfter: true }),
  hangAfterOutput: (text) => ({ chunks: [sse(completionChunk(0, text, null))], hang: true }),
};

function completionChunk(index: number, text: string, finish: string | null) {
  return { id: 'cmpl-up', object: 'text_completion', created: 1, model: 'm', choices: [{ text, index, logprobs: null, finish_reason: finish }] };
}

export const openaiChat: WireFormat = {
  name: 'openai chat',
  reportsPromptEarly: false,
  json: (answer) => ({
    json: {
      id: 'chatcmpl-up',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: answer.texts.map((text, index) => ({ index, message: { role: 'assistant', content: text }, finish_reason: 'stop' })),
      ...(answer.usage ? { usage: openaiUsage(answer.usage) } : {}),
    },
  }),
  stream: (answer) => ({
    chunks: [
      ...answer.texts.flatMap((text, index) => pieces(text).map((piece) => sse(chatChunk(index, piece, null)))),
      ...answer.texts.map((_, index) => sse(chatChunk(index, null, 'stop'))),
      ...(answer.usage
        ? [sse({ id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: openaiUsage(answer.usage) })]
        : []),
      'data: [DONE]\n\n',
    ],
  }),
  breakAfterOutput: (text) => ({ chunks: [sse(chatChunk(0, text, null))], destroyAfter: true }),
  hangAfterOutput: (text) => ({ chunks: [sse(chatChunk(0, text, null))], hang: true }),
};

function chatChunk(index: number, content: string | null, finish: string | null) {
  return {
    id: 'chatcmpl-up',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index, delta: content === null ? {} : { content }, finish_reason: finish }],
  };
}

const anthropicStart = (usage: Billed | null) =>
  sse(
    {
      type: 'message_start',
      message: {
        id: 'msg_up',
        type: 'message',
        role: 'assistant',
        model: 'm',
        content: [],
        usage: usage ? { input_tokens: usage.prompt, output_tokens: 1 } : {},
      },
    },
    'message_start',
  );
const anthropicDelta = (text: string) => sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }, 'content_block_delta');

export const anthropicMessages: WireFormat = {
  name: 'anthropic messages',
  reportsPromptEarly: true,
  json: (answer) => ({
    json: {
      id: 'msg_up',
      type: 'message',
      role: 'assistant',
      model: 'm',
      content: [{ type: 'text', text: answer.texts[0] }],
      stop_reason: answer.stopped ? 'stop_sequence' : 'end_turn',
      usage: answer.usage ? { input_tokens: answer.usage.prompt, output_tokens: answer.usage.completion } : {},
    },
  }),
  stream: (answer) => ({
    chunks: [
      anthropicStart(answer.usage),
      sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start'),
      ...pieces(answer.texts[0]).map(anthropicDelta),
      sse({ type: 'content_block_stop', index: 0 }, 'content_block_stop'),
      sse(
        {
          type: 'message_delta',
          delta: { stop_reason: answer.stopped ? 'stop_sequence' : 'end_turn' },
          usage: answer.usage ? { output_tokens: answer.usage.completion } : {},
        },
        'message_delta',
      ),
      sse({ type: 'message_stop' }, 'message_stop'),
    ],
  }),
  breakAfterOutput: (text, usage) => ({ chunks: [anthropicStart(usage), anthropicDelta(text)], destroyAfter: true }),
  hangAfterOutput: (text, usage) => ({ chunks: [anthropicStart(usage), anthropicDelta(text)], hang: true }),
};

const geminiChunk = (text: string, finish: string | null, usage: Record<string, number> | null) => ({
  candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0, ...(finish ? { finishReason: finish } : {}) }],
  ...(usage ? { usageMetadata: usage } : {}),
});

export const geminiGenerateContent: WireFormat = {
  name: 'gemini generateContent',
  reportsPromptEarly: true,
  json: (answer) => ({ json: geminiChunk(answer.texts[0], 'STOP', answer.usage ? geminiUsage(answer.usage) : null) }),
  stream: (answer) => {
    const parts = pieces(answer.texts[0]);
    return {
      chunks: parts.map((piece, index) => {
        const last = index === parts.length - 1;
        // Gemini repeats its running usage on every chunk; the prompt count comes first.
        const usage = answer.usage
          ? last
            ? geminiUsage(answer.usage)
            : { promptTokenCount: answer.usage.prompt, totalTokenCount: answer.usage.prompt }
          : null;
        return sse(geminiChunk(piece, last ? 'STOP' : null, usage));
      }),
    };
  },
  breakAfterOutput: (text, usage) => ({
    chunks: [sse(geminiChunk(text, null, { promptTokenCount: usage.prompt, totalTokenCount: usage.prompt }))],
    destroyAfter: true,
  }),
  hangAfterOutput: (text, usage) => ({ chunks: [sse(geminiChunk(text, null, { promptTokenCount: usage.prompt, totalTokenCount: usage.prompt }))], hang: true }),
};

function geminiUsage(usage: Billed) {
  return { promptTokenCount: usage.prompt, candidatesTokenCount: usage.completion, totalTokenCount: usage.prompt + usage.completion };
}
