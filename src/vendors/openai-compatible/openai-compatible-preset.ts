/**
 * What one OpenAI-compatible server can do, as data. The shared adapter reads only this; adding a
 * server is a few lines in `openai-compatible-presets.ts` or a `kind: openai-compatible` entry in
 * the config file. Anything a preset does not claim is emulated (n, echo, prompt lists) or refused.
 */
import type { CatalogueEntry } from '../shared/model-catalogue.js';
import type { RequestParam } from '../shared/refusals.js';
import { int64SeedRange, type SeedRange } from '../shared/seed-range.js';

/** What the native `/v1/completions` endpoint of this server honours. */
export interface NativeFeatures {
  /** `prompt: [..]` with several prompts in one call. */
  promptList: boolean;
  /** `n` > 1 in one call. */
  nativeN: boolean;
  /** `echo: true` (with logprobs over the prompt). */
  nativeEcho: boolean;
  logprobs: boolean;
  /** Token-id arrays as prompts. */
  tokenPrompts: boolean;
  bestOf: boolean;
  suffix: boolean;
  /** `max_tokens: 0` answered by the server itself (otherwise the gateway answers it, with no call). */
  zeroMaxTokens: boolean;
}

export interface OpenAICompatiblePreset {
  /** The vendor prefix in `vendor/name`. */
  name: string;
  /** `<PREFIX>_API_KEY`, `<PREFIX>_BASE_URL`, `<PREFIX>_API_VERSION`. */
  envPrefix: string;
  /** Null: the operator must give a base URL (self-hosted servers, Azure resources). */
  defaultBaseUrl: string | null;
  /** False for self-hosted servers: offered once the base URL is set, the key is optional. */
  keyRequired: boolean;
  auth: 'bearer' | 'api-key';
  /** `azure`: `{base}/openai/deployments/{model}/…?api-version=…`, model not in the body. */
  urlStyle: 'openai' | 'azure';
  /** Paths appended to the base URL (openai style only). */
  paths: { native: string; chat: string };
  /** Mode for models not in the catalogue (and not declared). */
  defaultMode: 'native' | 'chat';
  native: NativeFeatures;
  /** `n` > 1 in one chat call. */
  chatN: boolean;
  /** Parameters with no equivalent on this server (either mode), with the reason given to clients. */
  unsupported: Partial<Record<RequestParam, string>>;
  /** Mistral calls it random_seed. */
  seedField: 'seed' | 'random_seed';
  /** The seeds the server accepts; a client's seed is wrapped into them (see seed-range.ts). */
  seedRange: SeedRange;
  /** OpenAI's reasoning models accept only max_completion_tokens on chat; most servers know max_tokens. */
  chatMaxTokensField: 'max_tokens' | 'max_completion_tokens';
  /** `stream_options`: ask with include_usage; `always`: the server sends usage unasked (and may reject the option). */
  streamUsage: 'stream_options' | 'always';
  models: CatalogueEntry[];
  /** Exact token counter for a model name, when the gateway has that model's tokenizer. */
  exactCounterFor?(name: string): ((text: string) => number) | null;
}

/** Everything off: what a server that documents nothing beyond the basics claims. */
export const conservativeNativeFeatures: NativeFeatures = {
  promptList: false,
  nativeN: false,
  nativeEcho: false,
  logprobs: false,
  tokenPrompts: false,
  bestOf: false,
  suffix: false,
  zeroMaxTokens: false,
};

export const fullNativeFeatures: NativeFeatures = {
  promptList: true,
  nativeN: true,
  nativeEcho: true,
  logprobs: true,
  tokenPrompts: true,
  bestOf: true,
  suffix: true,
  zeroMaxTokens: true,
};

export const standardPaths = { native: '/v1/completions', chat: '/v1/chat/completions' };

/** What a preset is unless it says otherwise: nothing claimed beyond the basics. */
export const presetDefaults = {
  keyRequired: true,
  auth: 'bearer',
  urlStyle: 'openai',
  paths: standardPaths,
  defaultMode: 'native',
  native: conservativeNativeFeatures,
  chatN: false,
  seedField: 'seed',
  // OpenAI's own seed range; servers that document a narrower one say so.
  seedRange: int64SeedRange,
  chatMaxTokensField: 'max_tokens',
  streamUsage: 'stream_options',
  unsupported: {},
  models: [],
} as const satisfies Partial<OpenAICompatiblePreset>;
