/** Built-in Anthropic catalogue. Claude models are chat-only: completions are emulated over Messages. */
import type { CatalogueEntry } from '../shared/model-catalogue.js';

const claude = (name: string, contextWindow = 200_000): CatalogueEntry => ({ name, contextWindow, nativeCompletions: false, logprobs: false });

export const anthropicModels: CatalogueEntry[] = [
  claude('claude-opus-4-1'),
  claude('claude-opus-4-0'),
  claude('claude-sonnet-4-5'),
  claude('claude-sonnet-4-0'),
  claude('claude-3-7-sonnet-latest'),
  claude('claude-haiku-4-5'),
  claude('claude-3-5-haiku-latest'),
];
