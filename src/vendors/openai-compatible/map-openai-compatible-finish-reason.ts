import type { FinishReason } from '../types.js';

/** Completions and chat reasons; tool and function calls cannot occur here and read as a normal stop. */
export function mapOpenAICompatibleFinishReason(reason: string): FinishReason {
  if (reason === 'length') return 'length';
  if (reason === 'content_filter') return 'content_filter';
  return 'stop';
}
