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
      system.push(message.content);
      continue;
    }
    const last = turns.at(-1);
    if (last && last.role === message.role) last.content = `${last.content}\n\n${message.content}`;
    else turns.push({ role: message.role, content: message.content });
  }
  return { system: system.length > 0 ? system.join('\n\n') : null, turns };
}

/** For vendors that take the system text apart: a conversation of system text alone leaves them no turn, which their APIs refuse. */
export function refuseSystemOnly(request: GenerationRequest, vendor: string): void {
  if (request.messages === null || request.messages.some((message) => message.role !== 'system')) return;
  throw unsupportedParameter('messages', vendor, 'it needs a user or assistant message besides the system text');
}
