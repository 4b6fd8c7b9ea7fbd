/**
 * OpenAI itself, as a preset of the OpenAI-compatible adapter: every completions parameter passes
 * through to `POST {base}/v1/completions` (`max_tokens: 0` included: the endpoint answers it).
 * Models that only exist on chat (gpt-4o, gpt-4.1, …) are catalogued as chat and served through
 * `/v1/chat/completions`; unlisted names go to the native endpoint, like the legacy API itself.
 * Ranges: completions and chat take our ranges as they are (temperature 0–2, top_p 0–1, penalties
 * -2 to 2, a signed 64-bit seed); chat wants at least one output token, so `max_tokens: 0` on a
 * chat model is answered by the gateway without a call.
 */
import { fullNativeFeatures, standardPaths, type OpenAICompatiblePreset } from '../openai-compatible/openai-compatible-preset.js';
import type { CatalogueEntry } from '../shared/model-catalogue.js';
import { int64SeedRange } from '../shared/seed-range.js';
import { openaiExactCounter } from './openai-tokenizers.js';

function entry(name: string, contextWindow: number, nativeCompletions: boolean): CatalogueEntry {
  return { name, contextWindow, nativeCompletions, logprobs: nativeCompletions, exactCounter: openaiExactCounter(name) };
}

export const openaiPreset: OpenAICompatiblePreset = {
  name: 'openai',
  envPrefix: 'OPENAI',
  defaultBaseUrl: 'https://api.openai.com',
  keyRequired: true,
  auth: 'bearer',
  urlStyle: 'openai',
  paths: standardPaths,
  defaultMode: 'native',
  native: fullNativeFeatures,
  chatN: true,
  unsupported: {},
  seedField: 'seed',
  // Completions and chat both take a signed 64-bit seed.
  seedRange: int64SeedRange,
  chatMaxTokensField: 'max_completion_tokens',
  streamUsage: 'stream_options',
  exactCounterFor: openaiExactCounter,
  models: [
    entry('gpt-3.5-turbo-instruct', 4_096, true),
    entry('davinci-002', 16_384, true),
    entry('babbage-002', 16_384, true),
    entry('gpt-4o', 128_000, false),
    entry('gpt-4o-mini', 128_000, false),
    entry('gpt-4.1', 1_047_576, false),
    entry('gpt-4.1-mini', 1_047_576, false),
    entry('gpt-4.1-nano', 1_047_576, false),
  ],
};
