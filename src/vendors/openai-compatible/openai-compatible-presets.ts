/**
 * The built-in OpenAI-compatible servers. Claims are conservative: a feature is claimed only where
 * the server documents it; what is not claimed is emulated or refused, never silently dropped.
 * OpenAI itself is a preset too (`openai/openai-adapter.ts`).
 */
import { catalogueEntries } from '../shared/model-catalogue.js';
import { nonNegativeInt32SeedRange } from '../shared/seed-range.js';
import { conservativeNativeFeatures, fullNativeFeatures, presetDefaults, type OpenAICompatiblePreset } from './openai-compatible-preset.js';

const noUser = 'the server has no end-user field';

export const openaiCompatiblePresets: readonly OpenAICompatiblePreset[] = [
  {
    ...presetDefaults,
    name: 'azure',
    envPrefix: 'AZURE_OPENAI',
    defaultBaseUrl: null,
    auth: 'api-key',
    urlStyle: 'azure',
    // The model name is the deployment name; deployments of instruct models have native completions.
    native: { ...fullNativeFeatures, suffix: false },
    chatN: true,
    unsupported: { suffix: 'Azure OpenAI completions deployments have no insertion mode' },
  },
  {
    ...presetDefaults,
    name: 'vllm',
    envPrefix: 'VLLM',
    defaultBaseUrl: null,
    keyRequired: false,
    // vLLM's sampling parameters want at least one token: max_tokens 0 is answered by the gateway.
    native: { ...fullNativeFeatures, bestOf: false, suffix: false, zeroMaxTokens: false },
    chatN: true,
    unsupported: { best_of: "vLLM's V1 engine has no best_of", suffix: 'vLLM does not support suffix' },
  },
  {
    ...presetDefaults,
    name: 'ollama',
    envPrefix: 'OLLAMA',
    defaultBaseUrl: null,
    keyRequired: false,
    native: { ...conservativeNativeFeatures, suffix: true },
    unsupported: { best_of: 'Ollama has no best_of', logit_bias: 'Ollama has no logit_bias', user: noUser },
  },
  {
    ...presetDefaults,
    name: 'llamacpp',
    envPrefix: 'LLAMACPP',
    defaultBaseUrl: null,
    keyRequired: false,
    unsupported: { best_of: 'llama.cpp server has no best_of', user: noUser },
  },
  {
    ...presetDefaults,
    name: 'together',
    envPrefix: 'TOGETHER',
    defaultBaseUrl: 'https://api.together.xyz',
    native: { ...conservativeNativeFeatures, nativeN: true, nativeEcho: true, logprobs: true },
    chatN: true,
    unsupported: { best_of: 'Together has no best_of', suffix: 'Together has no suffix' },
  },
  {
    ...presetDefaults,
    name: 'fireworks',
    envPrefix: 'FIREWORKS',
    defaultBaseUrl: 'https://api.fireworks.ai/inference',
    native: { ...fullNativeFeatures, bestOf: false, suffix: false, zeroMaxTokens: false },
    chatN: true,
    unsupported: { best_of: 'Fireworks has no best_of', suffix: 'Fireworks has no suffix' },
  },
  {
    ...presetDefaults,
    name: 'deepseek',
    envPrefix: 'DEEPSEEK',
    defaultBaseUrl: 'https://api.deepseek.com',
    // Native completions are DeepSeek's FIM beta; chat is the general endpoint.
    paths: { native: '/beta/completions', chat: '/chat/completions' },
    defaultMode: 'chat',
    native: { ...conservativeNativeFeatures, nativeEcho: true, logprobs: true, suffix: true },
    unsupported: { seed: 'DeepSeek has no seed', logit_bias: 'DeepSeek has no logit_bias', user: noUser },
    models: catalogueEntries(131_072, ['deepseek-chat', 'deepseek-reasoner']),
  },
  {
    ...presetDefaults,
    name: 'groq',
    envPrefix: 'GROQ',
    defaultBaseUrl: 'https://api.groq.com/openai',
    defaultMode: 'chat',
    unsupported: { logit_bias: 'Groq has no logit_bias' },
    models: catalogueEntries(131_072, ['llama-3.3-70b-versatile', 'llama-3.1-8b-instant']),
  },
  {
    ...presetDefaults,
    name: 'mistral',
    envPrefix: 'MISTRAL',
    defaultBaseUrl: 'https://api.mistral.ai',
    defaultMode: 'chat',
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
    ...presetDefaults,
    name: 'openrouter',
    envPrefix: 'OPENROUTER',
    defaultBaseUrl: 'https://openrouter.ai/api',
    unsupported: { best_of: 'OpenRouter has no best_of', logit_bias: 'OpenRouter does not guarantee logit_bias across providers' },
  },
];
