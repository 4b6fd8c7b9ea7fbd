/**
 * `gemini/*` → `{base}/v1beta/models/{model}:generateContent`, streams via
 * `:streamGenerateContent?alt=sse`, key in `x-goog-api-key`. One prompt, one choice per call; the
 * shared pipeline fans out prompts and n, enforces stops beyond Gemini's limit and prepends echo.
 */
import type { Config } from '../../config/config.js';
import type { CallPart } from '../shared/call-part.js';
import { createModelCatalogue } from '../shared/model-catalogue.js';
import { parseVendorConfig } from '../shared/parse-vendor-config.js';
import { promptText } from '../shared/plan-generation.js';
import { readSseEvents } from '../shared/read-sse-events.js';
import { runUpstreamCalls, type PlannedCall } from '../shared/run-upstream-calls.js';
import { UpstreamClient } from '../shared/upstream-client.js';
import { resolveEndpoint } from '../shared/vendor-endpoint.js';
import { vendorSliceSchema } from '../shared/vendor-slice.js';
import type { GenerationRequest, ModelInfo, StreamPart, VendorAdapter } from '../types.js';
import { extractGeminiError } from './extract-gemini-error.js';
import { geminiBody } from './gemini-body.js';
import { geminiModels } from './gemini-models.js';
import { planGemini } from './gemini-plan.js';
import { geminiResponseParts, geminiStreamParts, type GeminiFailure } from './parse-gemini-response.js';

const vendor = 'gemini';

/** The adapter, or the message saying which variable enables it (GEMINI_API_KEY). */
export function createGeminiAdapter(config: Config): VendorAdapter | string {
  const slice = parseVendorConfig(vendor, vendorSliceSchema, config.vendors[vendor]);
  const endpoint = resolveEndpoint({
    vendor,
    vendorEnv: config.vendorEnv,
    envPrefix: 'GEMINI',
    sliceBaseUrl: slice.baseUrl,
    defaultBaseUrl: 'https://generativelanguage.googleapis.com',
    keyRequired: true,
  });
  if (!endpoint.offered) return endpoint.hint;
  const apiKey = endpoint.apiKey!;
  const base = endpoint.baseUrl.replace(/\/+$/, '');
  const catalogue = createModelCatalogue(vendor, geminiModels, slice.models, {
    contextWindow: slice.unlistedContextWindow,
    nativeCompletions: false,
    logprobs: false,
    allowUnlisted: slice.allowUnlistedModels,
  });
  const client = new UpstreamClient({ vendor, transport: slice, credentialVariable: endpoint.keyVariable, secrets: [apiKey], extractError: extractGeminiError });

  const calls = (request: GenerationRequest, model: ModelInfo, requestId: string): PlannedCall[] => {
    const plan = planGemini(vendor, request);
    const modelPath = `${base}/v1beta/models/${encodeURIComponent(model.name)}`;
    const url = new URL(request.stream ? `${modelPath}:streamGenerateContent?alt=sse` : `${modelPath}:generateContent`);
    const failure: GeminiFailure = (status, message, retryAfter) => client.failure(status, message, model.name, retryAfter);
    return plan.groups.map((group) => {
      const prompt = promptText(request.prompts[group.promptIndexes[0]]);
      const body = geminiBody(request, plan, group);
      return {
        choiceOffset: group.choiceOffset,
        choiceCount: 1,
        echo: plan.gatewayEcho ? [prompt] : null,
        stops: plan.gatewayStops,
        promptText: prompt,
        countTokens: model.countTokens,
        async *run(signal: AbortSignal): AsyncGenerator<CallPart> {
          const headers = { 'x-goog-api-key': apiKey, 'x-request-id': requestId };
          const response = await client.open({ url, headers, body, streaming: request.stream, signal, model: model.name });
          if (!request.stream) {
            yield* geminiResponseParts(vendor, await client.readText(response, signal), failure);
            return;
          }
          yield* geminiStreamParts(vendor, readSseEvents(vendor, client.chunks(response, signal)), failure);
        },
      };
    });
  };

  return {
    name: vendor,
    listModels: () => catalogue.list(),
    resolveModel: (name) => catalogue.resolve(name),
    prepare: (request) => ({ emulated: planGemini(vendor, request).emulated }),
    async *stream(request, model, options): AsyncGenerator<StreamPart> {
      yield* runUpstreamCalls(calls(request, model, options.requestId), { signal: options.signal, retry: slice, maxConcurrentCalls: slice.maxConcurrentCalls });
    },
    close: () => client.close(),
  };
}
