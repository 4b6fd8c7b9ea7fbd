import type { FinishReason } from '../types.js';

export function mapAnthropicFinishReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'refusal':
      return 'content_filter';
    default:
      // end_turn, stop_sequence, pause_turn, tool_use (never requested here).
      return 'stop';
  }
}
