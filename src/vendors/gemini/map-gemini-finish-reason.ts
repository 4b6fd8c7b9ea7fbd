import type { FinishReason } from '../types.js';

const filtered = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']);

export function mapGeminiFinishReason(reason: string): FinishReason {
  if (reason === 'MAX_TOKENS') return 'length';
  if (filtered.has(reason)) return 'content_filter';
  // STOP, OTHER, LANGUAGE, FINISH_REASON_UNSPECIFIED, MALFORMED_FUNCTION_CALL: generation ended.
  return 'stop';
}
