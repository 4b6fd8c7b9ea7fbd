/**
 * `gemini/*` → `{base}/v1beta/models/{model}:generateContent`, streams via
 * `:streamGenerateContent?alt=sse`, key in `x-goog-api-key`. Gemini has no completions endpoint:
 * each call answers one prompt with one choice, and the shared single-choice adapter emulates the
 * rest: n too (candidateCount is not offered by every model), and `max_tokens: 0` (Gemini documents
 * no zero-token generation). The seed is an int32: a seed outside it is wrapped into it, and
 * emulated choice r sends seed + r wrapped the same way (seed-range.ts).
 */
import type { Config } from '../../config/config.js';
import { catalogueEntries } from '../shared/model-catalogue.js';
import { int32SeedRange } from '../shared/seed-range.js';
import { createSingleChoiceAdapter } from '../shared/single-choice-adapter.js';
import { conversationOf, systemAndTurns } from '../shared/conversation.js';
import type { VendorAdapter } from '../types.js';
import { extractGeminiError, geminiResponseParts, geminiStreamParts } from './parse-gemini-response.js';

/** The adapter, or the message saying which variable enables it (GEMINI_API_KEY). */
export function createGeminiAdapter(config: Config): VendorAdapter | string {
  return createSingleChoiceAdapter(config, {
    vendor: 'gemini',
    envPrefix: 'GEMINI',
    defaultBaseUrl: 'https://generativelanguage.googleapis.com',
    models: catalogueEntries(1_048_576, ['gemini-2.5-pro', 'gemini-2.5-flash', 'gemini-2.5-flash-lite', 'gemini-2.0-flash', 'gemini-2.0-flash-lite']),
    unsupported: {
      logprobs: 'Gemini logprobs are not offered by every model and do not map onto completions logprobs',
      logit_bias: 'Gemini has no logit_bias',
      best_of: 'Gemini cannot rank candidates',
      suffix: 'Gemini has no insertion mode',
      user: 'Gemini has no end-user field',
    },
    maxTemperature: 2,
    penaltyRange: { min: -2, below: 2 },
    maxStops: 5,
    seedRange: int32SeedRange,
    headers: (apiKey) => ({ 'x-goog-api-key': apiKey }),
    // The model name is encoded: no request field can reshape the upstream URL.
    url: (baseUrl, model, stream) => `${baseUrl}/v1beta/models/${encodeURIComponent(model)}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
    body(request, plan, group, prompt) {
      const generationConfig: Record<string, unknown> = { maxOutputTokens: request.maxTokens };
      if (request.temperature !== null) generationConfig.temperature = request.temperature;
      if (request.topP !== null) generationConfig.topP = request.topP;
      if (plan.vendorStops.length > 0) generationConfig.stopSequences = plan.vendorStops;
      // The plan already mapped the seed into Gemini's int32 range (per replica), so it is an exact double.
      if (group.seed !== null) generationConfig.seed = Number(group.seed);
      if (request.presencePenalty !== null) generationConfig.presencePenalty = request.presencePenalty;
      if (request.frequencyPenalty !== null) generationConfig.frequencyPenalty = request.frequencyPenalty;
      const { system, turns } = systemAndTurns(conversationOf(request, prompt));
      const contents = turns.map((turn) => ({ role: turn.role === 'assistant' ? 'model' : 'user', parts: [{ text: turn.content }] }));
      return system === null ? { contents, generationConfig } : { systemInstruction: { parts: [{ text: system }] }, contents, generationConfig };
    },
    extractError: extractGeminiError,
    responseParts: geminiResponseParts,
    streamParts: geminiStreamParts,
  });
}
