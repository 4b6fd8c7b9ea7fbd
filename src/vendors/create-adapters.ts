/**
 * Builds the offered vendor adapters from the config. The one place that knows the list of vendor
 * kinds; everything else goes through the registry.
 */
import type { Config } from '../config/config.js';
import type { Logger } from '../observability/logger.js';
import { createAnthropicAdapter } from './anthropic/anthropic-adapter.js';
import { createGeminiAdapter } from './gemini/gemini-adapter.js';
import { createLocalAdapter } from './local/local-adapter.js';
import { createOpenAIAdapter } from './openai/openai-adapter.js';
import { createOpenAICompatibleAdapters } from './openai-compatible/create-openai-compatible-adapters.js';
import { addCreated, type CreatedAdapters } from './registry.js';
import type { VendorAdapter } from './types.js';

export async function createAdapters(context: { config: Config; logger: Logger }): Promise<CreatedAdapters> {
  const created: CreatedAdapters = { adapters: [await createLocalAdapter({ logger: context.logger })], disabled: new Map() };
  const single: Record<string, (config: Config) => VendorAdapter | string> = {
    anthropic: createAnthropicAdapter,
    gemini: createGeminiAdapter,
    openai: createOpenAIAdapter,
  };
  for (const [name, create] of Object.entries(single)) addCreated(created, name, create(context.config));
  // Every other OpenAI-compatible preset, and the servers the operator declares.
  createOpenAICompatibleAdapters(context.config, new Set(['local', ...Object.keys(single)]), created);
  const offered = created.adapters.map((adapter) => adapter.name);
  context.logger.info({ vendors: offered, disabled: [...created.disabled.keys()] }, 'vendors configured');
  return created;
}
