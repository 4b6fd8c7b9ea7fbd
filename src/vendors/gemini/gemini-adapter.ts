/**
 * `gemini/*` → `{base}/v1beta/models/{model}:generateContent`, streams via
 * `:streamGenerateContent?alt=sse`, key in `x-goog-api-key`. One prompt, one choice per call; the
 * shared single-choice adapter fans out prompts and n, enforces stops beyond Gemini's limit and
 * prepends echo.
 */
import type { Config } from '../../config/config.js';
import { createSingleChoiceAdapter } from '../shared/single-choice-adapter.js';
import type { VendorAdapter } from '../types.js';
import { extractGeminiError } from './extract-gemini-error.js';
import { geminiBody } from './gemini-body.js';
import { geminiModels } from './gemini-models.js';
import { planGemini } from './gemini-plan.js';
import { geminiResponseParts, geminiStreamParts, type GeminiFailure } from './parse-gemini-response.js';

const vendor = 'gemini';

/** The adapter, or the message saying which variable enables it (GEMINI_API_KEY). */
export function createGeminiAdapter(config: Config): VendorAdapter | string {
  return createSingleChoiceAdapter(config, {
    vendor,
    envPrefix: 'GEMINI',
    defaultBaseUrl: 'https://generativelanguage.googleapis.com',
    models: geminiModels,
    extractError: extractGeminiError,
    plan: planGemini,
    async *call({ request, model, plan, group, client, baseUrl, apiKey, requestId, signal }) {
      // The model name is encoded: no request field can reshape the upstream URL.
      const modelPath = `${baseUrl}/v1beta/models/${encodeURIComponent(model.name)}`;
      const url = new URL(request.stream ? `${modelPath}:streamGenerateContent?alt=sse` : `${modelPath}:generateContent`);
      const failure: GeminiFailure = (status, message, retryAfter) => client.failure(status, message, model.name, retryAfter);
      const headers = { 'x-goog-api-key': apiKey, 'x-request-id': requestId };
      const response = await client.open({
        url,
        headers,
        body: JSON.stringify(geminiBody(request, plan, group)),
        streaming: request.stream,
        signal,
        model: model.name,
      });
      if (!request.stream) {
        yield geminiResponseParts(vendor, await client.readText(response, signal), failure);
        return;
      }
      yield* geminiStreamParts(vendor, client.chunks(response, signal), failure);
    },
  });
}
