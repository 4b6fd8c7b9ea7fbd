/** The `openai` vendor: the OpenAI preset of the shared OpenAI-compatible adapter. */
import type { Config } from '../../config/config.js';
import { createPresetAdapter } from '../openai-compatible/create-openai-compatible-adapters.js';
import type { VendorAdapter } from '../types.js';
import { openaiPreset } from './openai-preset.js';

/** The adapter, or the message saying which variable enables it (OPENAI_API_KEY). */
export function createOpenAIAdapter(config: Config): VendorAdapter | string {
  return createPresetAdapter(config, openaiPreset);
}
