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
import type { VendorAdapter } from './types.js';

export interface VendorContext {
  config: Config;
  logger: Logger;
}

export interface CreatedAdapters {
  adapters: VendorAdapter[];
  /** Vendors that are known but not configured → message saying which variable enables them. */
  disabled: Map<string, string>;
}

export async function createAdapters(context: VendorContext): Promise<CreatedAdapters> {
  const adapters: VendorAdapter[] = [];
  const disabled = new Map<string, string>();
  adapters.push(await createLocalAdapter({ logger: context.logger }));
  const single: Record<string, (config: Config) => VendorAdapter | string> = {
    anthropic: createAnthropicAdapter,
    gemini: createGeminiAdapter,
    openai: createOpenAIAdapter,
  };
  for (const [name, create] of Object.entries(single)) {
    const result = create(context.config);
    if (typeof result === 'string') disabled.set(name, result);
    else adapters.push(result);
  }
  // Every other OpenAI-compatible preset, and the servers the operator declares.
  const compatible = createOpenAICompatibleAdapters(context.config, new Set(['local', ...Object.keys(single)]));
  adapters.push(...compatible.adapters);
  for (const [name, hint] of compatible.disabled) disabled.set(name, hint);
  const offered = adapters.map((adapter) => adapter.name);
  context.logger.info({ vendors: offered, disabled: [...disabled.keys()] }, 'vendors configured');
  return { adapters, disabled };
}
