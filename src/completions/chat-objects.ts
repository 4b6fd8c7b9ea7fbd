/**
 * A run's answer as chat completions write it: the `chat.completion` object, and its stream as
 * `chat.completion.chunk`s (the first delta of each choice names the assistant's role), from the
 * text completion the run builds. Choices, finish reasons and usage are the same; only the
 * envelope and the logprobs' shape differ.
 */
import type { ChoiceLogprobs, Completion } from './completion-objects.js';

interface ChatTokenLogprob {
  token: string;
  logprob: number;
  bytes: number[];
}

export interface ChatLogprobs {
  content: (ChatTokenLogprob & { top_logprobs: ChatTokenLogprob[] })[];
  refusal: null;
}

/** `topLogprobs`: the alternatives asked for per token (`top_logprobs`). */
export function toChatCompletion(completion: Completion, topLogprobs: number): unknown {
  return {
    id: completion.id,
    object: 'chat.completion',
    created: completion.created,
    model: completion.model,
    choices: completion.choices.map((choice) => ({
      index: choice.index,
      message: { role: 'assistant', content: choice.text, refusal: null },
      logprobs: chatLogprobs(choice.logprobs, topLogprobs),
      finish_reason: choice.finish_reason,
    })),
    usage: completion.usage,
    system_fingerprint: completion.system_fingerprint,
  };
}

/** One stream's chunks: remembers which choices have named their role. */
export class ChatChunks {
  private readonly started: boolean[] = [];

  constructor(private readonly topLogprobs: number) {}

  chunk(completion: Completion): unknown {
    const chunk: Record<string, unknown> = {
      id: completion.id,
      object: 'chat.completion.chunk',
      created: completion.created,
      model: completion.model,
      system_fingerprint: completion.system_fingerprint,
      choices: completion.choices.map((choice) => ({
        index: choice.index,
        delta: this.delta(choice.index, choice.text, choice.finish_reason !== null),
        logprobs: chatLogprobs(choice.logprobs, this.topLogprobs),
        finish_reason: choice.finish_reason,
      })),
    };
    if ('usage' in completion) chunk.usage = completion.usage;
    return chunk;
  }

  private delta(index: number, text: string, finishing: boolean): Record<string, string> {
    if (!this.started[index]) {
      this.started[index] = true;
      return { role: 'assistant', content: text };
    }
    return finishing && text === '' ? {} : { content: text };
  }
}

/**
 * Chat's logprobs: per token its `top` most likely alternatives, most likely first. Legacy logprobs
 * add the sampled token to the top ones, so they may hold one more, which chat never returns.
 */
function chatLogprobs(logprobs: ChoiceLogprobs | null, top: number): ChatLogprobs | null {
  if (logprobs === null) return null;
  return {
    content: logprobs.tokens.map((token, index) => ({
      ...tokenLogprob(token, logprobs.token_logprobs[index] ?? 0),
      top_logprobs: Object.entries(logprobs.top_logprobs[index] ?? {})
        .sort(([, a], [, b]) => b - a)
        .slice(0, top)
        .map(([alternative, logprob]) => tokenLogprob(alternative, logprob)),
    })),
    refusal: null,
  };
}

/** A token with its UTF-8 bytes; a fragment of a character (`bytes:\xe2\x82`) is its bytes alone. */
function tokenLogprob(token: string, logprob: number): ChatTokenLogprob {
  if (token.startsWith('bytes:')) {
    const bytes = [...token.matchAll(/\\x([0-9a-fA-F]{2})/g)].map((match) => Number.parseInt(match[1], 16));
    return { token, logprob, bytes };
  }
  return { token, logprob, bytes: [...Buffer.from(token, 'utf8')] };
}
