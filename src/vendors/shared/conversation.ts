/**
 * A call's conversation: the request's own messages (a chat completion), or its one prompt as the
 * single user turn (a text completion served by a chat endpoint). For vendors that take the system
 * text apart and want turns that alternate, `systemAndTurns` joins what they cannot take as it is.
 */
import { unsupportedParameter } from '../../errors/gateway-error.js';
import type { ChatMessage, GenerationRequest } from '../types.js';

export function conversationOf(request: GenerationRequest, prompt: string): ChatMessage[] {
  return request.messages ?? [{ role: 'user', content: prompt }];
}

export interface SystemAndTurns {
  /** Every system message's text, in order, joined by a blank line; null when there is none. */
  system: string | null;
  /** The user and assistant turns, consecutive turns of one role joined by a blank line. */
  turns: { role: 'user' | 'assistant'; content: string }[];
}

export function systemAndTurns(messages: readonly ChatMessage[]): SystemAndTurns {
  const system: string[] = [];
  const turns: SystemAndTurns['turns'] = [];
  for (const message of messages) {
    if (message.role === 'system') {
      // An empty system text says nothing, and a vendor may refuse an empty one.
      if (message.content !== '') system.push(message.content);
      continue;
    }
    const last = turns.at(-1);
    if (last && last.role === message.role) last.content = `${last.content}\n\n${message.content}`;
    else turns.push({ role: message.role, content: message.content });
  }
  return { system: system.length > 0 ? system.join('\n\n') : null, turns };
}

/**
 * For vendors that take the system text apart (Anthropic, Gemini): a conversation of system text
 * alone leaves them no turn, and a turn without text is one their APIs refuse (save a last
 * assistant turn, which the answer continues). Said before any call, naming the message.
 */
export function refuseUnsendableTurns(request: GenerationRequest, vendor: string): void {
  const messages = request.messages;
  if (messages === null) return;
  if (messages.every((message) => message.role === 'system')) {
    throw unsupportedParameter('messages', vendor, 'it needs a user or assistant message besides the system text');
  }
  const last = messages.length - 1;
  const empty = messages.findIndex(
    (message, index) => message.role !== 'system' && message.content === '' && !(index === last && message.role === 'assistant'),
  );
  if (empty >= 0) throw unsupportedParameter(`messages[${empty}].content`, vendor, 'it takes no message without text');
}
