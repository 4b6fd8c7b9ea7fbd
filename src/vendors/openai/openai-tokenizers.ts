/**
 * Exact token counters for OpenAI models, chosen by model family. cl100k is the gateway's shared
 * tokenizer; o200k is loaded on first use only (it is large and most deployments never need it).
 */
import { compactBpe } from '../../tokenizer/compact-bpe.js';
import { countTokens } from '../../tokenizer/tokenizer.js';

type Counter = (text: string) => number;

function countO200k(text: string): number {
  if (text.length === 0) return 0;
  return compactBpe('o200k_base').count(text);
}

/** Families whose tokenizer is documented; anything else gets null (an estimate, honestly labelled). */
export function openaiExactCounter(name: string): Counter | null {
  const base = name.startsWith('ft:') ? name.slice(3) : name;
  if (/^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o1|o3|o4|chatgpt-4o)/.test(base)) return countO200k;
  if (/^(gpt-3\.5-turbo|gpt-4(?![o.])|davinci-002|babbage-002|text-embedding-3|text-embedding-ada-002)/.test(base)) return countTokens;
  return null;
}
