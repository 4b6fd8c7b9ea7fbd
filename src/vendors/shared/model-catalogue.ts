/**
 * A vendor's models: the built-in list plus the models its config slice declares. Unlisted names
 * are passed through (when `allowUnlistedModels`, the default) with a default context window, so a
 * model the vendor released yesterday works today; if the vendor does not know it either, its 404
 * becomes our 404 model_not_found. Unlisted models are not advertised in listModels.
 */
import { countTokens } from '../../tokenizer/tokenizer.js';
import type { ModelInfo } from '../types.js';
import type { VendorSlice } from './vendor-config.js';

export interface CatalogueEntry {
  name: string;
  contextWindow: number;
  nativeCompletions: boolean;
  logprobs: boolean;
  /** The model has a chat endpoint (default true; OpenAI's completion-only models do not). */
  chat?: boolean;
}

/** What a model is when neither the built-in list nor its declaration says otherwise. */
export interface CatalogueDefaults {
  nativeCompletions: boolean;
  logprobs: boolean;
  /** Exact token counter for a model name (OpenAI's naming predicts the tokenizer), or null → cl100k estimate. */
  exactCounterFor?: (name: string) => ((text: string) => number) | null;
}

export interface ModelCatalogue {
  list(): ModelInfo[];
  resolve(name: string): ModelInfo | null;
}

/** Built-in entries for models sharing a context window: chat-only without logprobs, or native with them (and with chat unless `chat` is false). */
export function catalogueEntries(contextWindow: number, names: readonly string[], native = false, chat = true): CatalogueEntry[] {
  return names.map((name) => ({ name, contextWindow, nativeCompletions: native, logprobs: native, chat }));
}

// Model names end up in URL paths; refuse what no vendor uses rather than escaping surprises.
const plausibleName = /^[A-Za-z0-9._:@+\-/]{1,256}$/;

export function createModelCatalogue(vendor: string, builtIn: readonly CatalogueEntry[], slice: VendorSlice, defaults: CatalogueDefaults): ModelCatalogue {
  const modelInfo = (entry: CatalogueEntry): ModelInfo => {
    const exact = defaults.exactCounterFor?.(entry.name) ?? null;
    return {
      id: `${vendor}/${entry.name}`,
      vendor,
      name: entry.name,
      contextWindow: entry.contextWindow,
      capabilities: { logprobs: entry.logprobs, nativeCompletions: entry.nativeCompletions, chat: entry.chat ?? true },
      countTokens: exact ?? countTokens,
      exactTokenizer: exact !== null,
    };
  };
  const entries = new Map<string, CatalogueEntry>();
  for (const entry of builtIn) entries.set(entry.name, entry);
  for (const declaration of slice.models) {
    const base = entries.get(declaration.name);
    entries.set(declaration.name, {
      name: declaration.name,
      contextWindow: declaration.contextWindow ?? base?.contextWindow ?? slice.unlistedContextWindow,
      nativeCompletions: declaration.completions ? declaration.completions === 'native' : (base?.nativeCompletions ?? defaults.nativeCompletions),
      logprobs: declaration.logprobs ?? base?.logprobs ?? defaults.logprobs,
      chat: base?.chat ?? true,
    });
  }
  const listed = new Map<string, ModelInfo>();
  for (const entry of entries.values()) listed.set(entry.name, modelInfo(entry));
  return {
    list: () => [...listed.values()],
    resolve(name) {
      const known = listed.get(name);
      if (known) return known;
      if (!slice.allowUnlistedModels || !plausibleName.test(name)) return null;
      return modelInfo({ name, contextWindow: slice.unlistedContextWindow, nativeCompletions: defaults.nativeCompletions, logprobs: defaults.logprobs });
    },
  };
}
