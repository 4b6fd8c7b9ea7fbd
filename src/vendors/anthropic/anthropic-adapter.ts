/**
 * `anthropic/*` → Messages API `POST {base}/v1/messages` (anthropic-version 2023-06-01, x-api-key).
 * Every call is one prompt, one choice; the shared pipeline fans out prompts and n, enforces the
 * stops Anthropic cannot take and prepends echo.
 */
import type { Config } from '../../config/config.js';
import type { CallPart } from '../shared/call-part.js';
import { createModelCatalogue } from '../shared/model-catalogue.js';
import { parseVendorConfig } from '../shared/parse-vendor-config.js';
import { promptText } from '../shared/plan-generation.js';
import { tryParseJson } from '../shared/parse-upstream-json.js';
import { readSseEvents } from '../shared/read-sse-events.js';
import { runUpstreamCalls, type PlannedCall } from '../shared/run-upstream-calls.js';
import { UpstreamClient, type ExtractedError } from '../shared/upstream-client.js';
import { resolveEndpoint } from '../shared/vendor-endpoint.js';
import { vendorSliceSchema } from '../shared/vendor-slice.js';
import type { GenerationRequest, ModelInfo, StreamPart, VendorAdapter } from '../types.js';
import { anthropicErrorBodySchema, anthropicErrorStatus } from './anthropic-api.js';
import { anthropicBody } from './anthropic-body.js';
import { anthropicModels } from './anthropic-models.js';
import { planAnthropic } from './anthropic-plan.js';
import { anthropicMessageParts, anthropicStreamParts } from './parse-anthropic-response.js';

const vendor = 'anthropic';
const anthropicVersion = '2023-06-01';

/** The adapter, or the message saying which variable enables it (ANTHROPIC_API_KEY). */
export function createAnthropicAdapter(config: Config): VendorAdapter | string {
  const slice = parseVendorConfig(vendor, vendorSliceSchema, config.vendors[vendor]);
  const endpoint = resolveEndpoint({
    vendor,
    vendorEnv: config.vendorEnv,
    envPrefix: 'ANTHROPIC',
    sliceBaseUrl: slice.baseUrl,
    defaultBaseUrl: 'https://api.anthropic.com',
    keyRequired: true,
  });
  if (!endpoint.offered) return endpoint.hint;
  const apiKey = endpoint.apiKey!;
  const catalogue = createModelCatalogue(vendor, anthropicModels, slice.models, {
    contextWindow: slice.unlistedContextWindow,
    nativeCompletions: false,
    logprobs: false,
    allowUnlisted: slice.allowUnlistedModels,
  });
  const client = new UpstreamClient({ vendor, transport: slice, credentialVariable: endpoint.keyVariable, secrets: [apiKey], extractError: extractAnthropicError });
  const url = new URL(`${endpoint.baseUrl.replace(/\/+$/, '')}/v1/messages`);

  const calls = (request: GenerationRequest, model: ModelInfo, requestId: string): PlannedCall[] => {
    const plan = planAnthropic(vendor, request);
    return plan.groups.map((group) => {
      const prompt = promptText(request.prompts[group.promptIndexes[0]]);
      const body = anthropicBody(request, plan, group);
      return {
        choiceOffset: group.choiceOffset,
        choiceCount: 1,
        echo: plan.gatewayEcho ? [prompt] : null,
        stops: plan.gatewayStops,
        promptText: prompt,
        countTokens: model.countTokens,
        async *run(signal: AbortSignal): AsyncGenerator<CallPart> {
          const headers = { 'x-api-key': apiKey, 'anthropic-version': anthropicVersion, 'x-request-id': requestId };
          const response = await client.open({ url, headers, body, streaming: request.stream, signal, model: model.name });
          if (!request.stream) {
            yield* anthropicMessageParts(vendor, await client.readText(response, signal));
            return;
          }
          const events = readSseEvents(vendor, client.chunks(response, signal));
          yield* anthropicStreamParts(vendor, events, (status, message) => client.failure(status, message, model.name));
        },
      };
    });
  };

  return {
    name: vendor,
    listModels: () => catalogue.list(),
    resolveModel: (name) => catalogue.resolve(name),
    prepare: (request) => ({ emulated: planAnthropic(vendor, request).emulated }),
    async *stream(request, model, options): AsyncGenerator<StreamPart> {
      yield* runUpstreamCalls(calls(request, model, options.requestId), { signal: options.signal, retry: slice, maxConcurrentCalls: slice.maxConcurrentCalls });
    },
    close: () => client.close(),
  };
}

function extractAnthropicError(text: string): ExtractedError {
  const body = tryParseJson(anthropicErrorBodySchema, text);
  const type = body?.error?.type ?? '';
  // A 529 overloaded_error is a 5xx like any other; the type only matters when the status is odd.
  return { message: body?.error?.message ?? null, ...(type === 'overloaded_error' ? { status: anthropicErrorStatus[type] } : {}) };
}
