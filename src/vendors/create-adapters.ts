/**
 * Builds the offered vendor adapters from the config. The one place that knows the list of vendor
 * kinds; everything else goes through the registry.
 */
import type { Config } from '../config/config.js';
import type { Logger } from '../observability/logger.js';
import { createLocalAdapter } from './local/local-adapter.js';
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
  return { adapters, disabled };
}
