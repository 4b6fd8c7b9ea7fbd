/**
 * The built-in OpenAI-compatible servers. Claims are conservative: a feature is claimed only where
 * the server documents it; what is not claimed is emulated or refused, never silently dropped.
 * OpenAI itself is a preset too (`openai/openai-preset.ts`).
 */
import { catalogueEntries } from '../shared/model-catalogue.js';
import { int64SeedRange, nonNegativeInt32SeedRange } from '../shared/seed-range.js';
import { conservativeNativeFeatures, fullNativeFeatures, standardPaths, type OpenAICompatiblePreset } from './openai-compatible-preset.js';

const common = {
  auth: 'bearer',
  urlStyle: 'openai',
  paths: standardPaths,
  seedField: 'seed',
  // OpenAI's own seed range; servers that document a narrower one say so below.
  seedRange: int64SeedRange,
  chatMaxTokensField: 'max_tokens',
  streamUsage: 'stream_options',
  unsupported: {},
  models: [],
} as const satisfies Partial<OpenAICompatiblePreset>;

const noUser = 'the server has no end-user field';

export const openaiCompatiblePresets: readonly OpenAICompatiblePreset[] = [
  {
    ...common,
    name: 'azure',
    envPrefix: 'AZURE_OPENAI',
    defaultBaseUrl: null,
    keyRequired: true,
    auth: 'api-key',
    urlStyle: 'azure',
    // The model name is the deployment name; deployments of instruct models have native completions.
    defaultMode: 'native',
    native: { ...fullNativeFeatures, suffix: false },
    chatN: true,
    unsupported: { suffix: 'Azure OpenAI completions deployments have no insertion mode' },
  },
  {
    ...common,
    name: 'vllm',
    envPrefix: 'VLLM',
    defaultBaseUrl: null,
    keyRequired: false,
    defaultMode: 'native',
    // vLLM's sampling parameters want at least one token: max_tokens 0 is answered by the gateway.
    native: { ...fullNativeFeatures, bestOf: false, suffix: false, zeroMaxTokens: false },
    chatN: true,
    unsupported: { best_of: "vLLM's V1 engine has no best_of", suffix: 'vLLM does not support suffix' },
  },
  {
    ...common,
    name: 'ollama',
    envPrefix: 'OLLAMA',
    defaultBaseUrl: null,
    keyRequired: false,
    defaultMode: 'native',
    native: { ...conservativeNativeFeatures, suffix: true },
    chatN: false,
    unsupported: { best_of: 'Ollama has no best_of', logit_bias: 'Ollama has no logit_bias', user: noUser },
  },
  {
    ...common,
    name: 'llamacpp',
    envPrefix: 'LLAMACPP',
    defaultBaseUrl: null,
    keyRequired: false,
    defaultMode: 'native',
    native: conservativeNativeFeatures,
    chatN: false,
    unsupported: { best_of: 'llama.cpp server has no best_of', user: noUser },
  },
  {
    ...common,
    name: 'together',
    envPrefix: 'TOGETHER',
    defaultBaseUrl: 'https://api.together.xyz',
    keyRequired: true,
    defaultMode: 'native',
    native: { ...conservativeNativeFeatures, nativeN: true, nativeEcho: true, logprobs: true },
    chatN: true,
    unsupported: { best_of: 'Together has no best_of', suffix: 'Together has no suffix' },
  },
  {
    ...common,
    name: 'fireworks',
    envPrefix: 'FIREWORKS',
    defaultBaseUrl: 'https://api.fireworks.ai/inference',
    keyRequired: true,
    defaultMode: 'native',
    native: { ...fullNativeFeatures, bestOf: false, suffix: false, zeroMaxTokens: false },
    chatN: true,
    unsupported: { best_of: 'Fireworks has no best_of', suffix: 'Fireworks has no suffix' },
  },
  {
    ...common,
    name: 'deepseek',
    envPrefix: 'DEEPSEEK',
    defaultBaseUrl: 'https://api.deepseek.com',
    keyRequired: true,
    // Native completions are DeepSeek's FIM beta; chat is the general endpoint.
    paths: { native: '/beta/completions', chat: '/chat/completions' },
    defaultMode: 'chat',
    native: { ...conservativeNativeFeatures, nativeEcho: true, logprobs: true, suffix: true },
    chatN: false,
    unsupported: { seed: 'DeepSeek has no seed', logit_bias: 'DeepSeek has no logit_bias', user: noUser },
    models: catalogueEntries(131_072, ['deepseek-chat', 'deepseek-reasoner']),
  },
  {
    ...common,
    name: 'groq',
    envPrefix: 'GROQ',
    defaultBaseUrl: 'https://api.groq.com/openai',
    keyRequired: true,
    defaultMode: 'chat',
    native: conservativeNativeFeatures,
    chatN: false,
    unsupported: { logit_bias: 'Groq has no logit_bias' },
    models: catalogueEntries(131_072, ['llama-3.3-70b-versatile', 'llama-3.1-8b-instant']),
  },
  {
    ...common,
    name: 'mistral',
    envPrefix: 'MISTRAL',
    defaultBaseUrl: 'https://api.mistral.ai',
    keyRequired: true,
    defaultMode: 'chat',
    native: conservativeNativeFeatures,
    chatN: true,
    seedField: 'random_seed',
    // Mistral documents random_seed as a non-negative integer; its clients type it as 32-bit.
    seedRange: nonNegativeInt32SeedRange,
    // Mistral sends usage on the last chunk unasked and rejects unknown fields such as stream_options.
    streamUsage: 'always',
    unsupported: { logit_bias: 'Mistral has no logit_bias', user: noUser },
    models: [...catalogueEntries(131_072, ['mistral-large-latest', 'mistral-small-latest']), ...catalogueEntries(262_144, ['codestral-latest'])],
  },
  {
    ...common,
    name: 'openrouter',
    envPrefix: 'OPENROUTER',
    defaultBaseUrl: 'https://openrouter.ai/api',
    keyRequired: true,
    defaultMode: 'native',
    native: conservativeNativeFeatures,
    chatN: false,
    unsupported: { best_of: 'OpenRouter has no best_of', logit_bias: 'OpenRouter does not guarantee logit_bias across providers' },
  },
];
