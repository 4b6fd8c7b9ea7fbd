/** Built-in Gemini catalogue. Gemini has no completions endpoint: completions are emulated over generateContent. */
import type { CatalogueEntry } from '../shared/model-catalogue.js';

const gemini = (name: string, contextWindow = 1_048_576): CatalogueEntry => ({ name, contextWindow, nativeCompletions: false, logprobs: false });

export const geminiModels: CatalogueEntry[] = [
  gemini('gemini-2.5-pro'),
  gemini('gemini-2.5-flash'),
  gemini('gemini-2.5-flash-lite'),
  gemini('gemini-2.0-flash'),
  gemini('gemini-2.0-flash-lite'),
];
