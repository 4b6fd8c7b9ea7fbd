/**
 * The `openai` vendor: OpenAI itself, as a preset of the shared OpenAI-compatible adapter. Every
 * completions parameter passes through to `POST {base}/v1/completions` (`max_tokens: 0` included:
 * the endpoint answers it). Models that only exist on chat (gpt-4o, gpt-4.1, …) are catalogued as
 * chat and served through `/v1/chat/completions`; unlisted names go to the native endpoint, like
 * the legacy API itself. Ranges: completions and chat take ours as they are (temperature 0–2, top_p
 * 0–1, penalties -2 to 2, a signed 64-bit seed); chat wants at least one output token, so
 * `max_tokens: 0` on a chat model is answered by the gateway without a call.
 */
import type { Config } from '../../config/config.js';
import { createPresetAdapter } from '../openai-compatible/create-openai-compatible-adapters.js';
import { fullNativeFeatures, presetDefaults, type OpenAICompatiblePreset } from '../openai-compatible/openai-compatible-preset.js';
import { catalogueEntries } from '../shared/model-catalogue.js';
import { compactBpe } from '../../tokenizer/compact-bpe.js';
import { countTokens } from '../../tokenizer/tokenizer.js';
import type { VendorAdapter } from '../types.js';

/**
 * The exact token counter of an OpenAI model by family; null (an estimate, honestly labelled) where
 * the tokenizer is not documented. o200k is loaded on first use: most deployments never need it.
 */
export function openaiExactCounter(name: string): ((text: string) => number) | null {
  const base = name.startsWith('ft:') ? name.slice(3) : name;
  if (/^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o1|o3|o4|chatgpt-4o)/.test(base)) return countO200k;
  if (/^(gpt-3\.5-turbo|gpt-4(?![o.])|davinci-002|babbage-002|text-embedding-3|text-embedding-ada-002)/.test(base)) return countTokens;
  return null;
}

function countO200k(text: string): number {
  if (text.length === 0) return 0;
  return compactBpe('o200k_base').count(text);
}

export const openaiPreset: OpenAICompatiblePreset = {
  ...presetDefaults,
  name: 'openai',
  envPrefix: 'OPENAI',
  defaultBaseUrl: 'https://api.openai.com',
  native: fullNativeFeatures,
  chatN: true,
  chatMaxTokensField: 'max_completion_tokens',
  exactCounterFor: openaiExactCounter,
  models: [
    // Completion-only models: OpenAI serves them on /v1/completions alone.
    ...catalogueEntries(4_096, ['gpt-3.5-turbo-instruct'], true, false),
    ...catalogueEntries(16_384, ['davinci-002', 'babbage-002'], true, false),
    ...catalogueEntries(128_000, ['gpt-4o', 'gpt-4o-mini']),
    ...catalogueEntries(1_047_576, ['gpt-4.1', 'gpt-4.1-mini', 'gpt-4.1-nano']),
  ],
};

/** The adapter, or the message saying which variable enables it (OPENAI_API_KEY). */
export function createOpenAIAdapter(config: Config): VendorAdapter | string {
  return createPresetAdapter(config, openaiPreset);
}
