/**
 * A vendor's models: the built-in list plus the models its config slice declares. Unlisted names
 * are passed through (when `allowUnlistedModels`, the default) with a default context window, so a
 * model the vendor released yesterday works today; if the vendor does not know it either, its 404
 * becomes our 404 model_not_found. Unlisted models are not advertised in listModels.
 */
import { z } from 'zod';
import { countTokens } from '../../tokenizer/tokenizer.js';
import type { ModelInfo } from '../types.js';

export const modelDeclarationSchema = z
  .object({
    name: z.string().min(1).max(256),
    /** Maximum prompt + completion tokens. */
    contextWindow: z.number().int().positive().optional(),
    /** Whether this model has the native completions endpoint or only chat. */
    completions: z.enum(['native', 'chat']).optional(),
    /** Whether the model can return logprobs (native completions only). */
    logprobs: z.boolean().optional(),
  })
  .strict();

export type ModelDeclaration = z.infer<typeof modelDeclarationSchema>;

export interface CatalogueEntry {
  name: string;
  contextWindow: number;
  nativeCompletions: boolean;
  logprobs: boolean;
  /** Exact token counter when the gateway has this model's tokenizer; null → cl100k estimate. */
  exactCounter?: ((text: string) => number) | null;
}

export interface CatalogueDefaults {
  contextWindow: number;
  nativeCompletions: boolean;
  logprobs: boolean;
  allowUnlisted: boolean;
  /** Picks an exact counter for a model name (OpenAI's naming predicts the tokenizer), or null. */
  exactCounterFor?: (name: string) => ((text: string) => number) | null;
}

export interface ModelCatalogue {
  list(): ModelInfo[];
  resolve(name: string): ModelInfo | null;
}

// Model names end up in URL paths; refuse what no vendor uses rather than escaping surprises.
const plausibleName = /^[A-Za-z0-9._:@+\-/]{1,256}$/;

export function createModelCatalogue(
  vendor: string,
  builtIn: readonly CatalogueEntry[],
  declared: readonly ModelDeclaration[],
  defaults: CatalogueDefaults,
): ModelCatalogue {
  const entries = new Map<string, CatalogueEntry>();
  for (const entry of builtIn) entries.set(entry.name, entry);
  for (const declaration of declared) {
    const base = entries.get(declaration.name);
    entries.set(declaration.name, {
      name: declaration.name,
      contextWindow: declaration.contextWindow ?? base?.contextWindow ?? defaults.contextWindow,
      nativeCompletions: declaration.completions ? declaration.completions === 'native' : (base?.nativeCompletions ?? defaults.nativeCompletions),
      logprobs: declaration.logprobs ?? base?.logprobs ?? defaults.logprobs,
      exactCounter: base?.exactCounter ?? defaults.exactCounterFor?.(declaration.name) ?? null,
    });
  }
  const listed = new Map<string, ModelInfo>();
  for (const entry of entries.values()) listed.set(entry.name, toModelInfo(vendor, entry));
  return {
    list: () => [...listed.values()],
    resolve(name) {
      const known = listed.get(name);
      if (known) return known;
      if (!defaults.allowUnlisted || !plausibleName.test(name)) return null;
      return toModelInfo(vendor, {
        name,
        contextWindow: defaults.contextWindow,
        nativeCompletions: defaults.nativeCompletions,
        logprobs: defaults.logprobs,
        exactCounter: defaults.exactCounterFor?.(name) ?? null,
      });
    },
  };
}

function toModelInfo(vendor: string, entry: CatalogueEntry): ModelInfo {
  const exact = entry.exactCounter ?? null;
  return {
    id: `${vendor}/${entry.name}`,
    vendor,
    name: entry.name,
    contextWindow: entry.contextWindow,
    capabilities: { logprobs: entry.logprobs, nativeCompletions: entry.nativeCompletions },
    countTokens: exact ?? countTokens,
    exactTokenizer: exact !== null,
  };
}
