/**
 * The adapter shape of chat-only vendors whose every upstream call answers one prompt with one
 * choice (Anthropic, Gemini): endpoint and key from the environment, a model catalogue, one pooled
 * client, a plan that fans prompts × n out into calls (or answers `max_tokens: 0` itself, with no
 * call), and gateway-side echo and stops. A vendor supplies only its plan, its request body and
 * its response parsing (`call`).
 */
import type { Config } from '../../config/config.js';
import type { GenerationRequest, ModelInfo, StreamPart, VendorAdapter } from '../types.js';
import type { CallPart } from './call-part.js';
import { emptyAnswerCall } from './empty-answer-call.js';
import { createModelCatalogue, type CatalogueEntry } from './model-catalogue.js';
import { parseVendorConfig } from './parse-vendor-config.js';
import { promptText, type CallGroup, type GenerationPlanDetail } from './plan-generation.js';
import { runUpstreamCalls, type PlannedCall } from './run-upstream-calls.js';
import { UpstreamClient, type ExtractedError } from './upstream-client.js';
import { resolveEndpoint } from './vendor-endpoint.js';
import { vendorSliceSchema } from './vendor-slice.js';

export interface SingleCallContext {
  request: GenerationRequest;
  model: ModelInfo;
  plan: GenerationPlanDetail;
  group: CallGroup;
  client: UpstreamClient;
  /** Base URL without a trailing slash. */
  baseUrl: string;
  apiKey: string;
  requestId: string;
  signal: AbortSignal;
}

export interface SingleChoiceVendor {
  vendor: string;
  /** `ANTHROPIC` → ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL. */
  envPrefix: string;
  defaultBaseUrl: string;
  models: CatalogueEntry[];
  extractError(text: string): ExtractedError;
  plan(vendor: string, request: GenerationRequest): GenerationPlanDetail;
  /** One upstream call: send it, and turn its answer (whole or streamed) into batches of call parts. */
  call(context: SingleCallContext): AsyncIterable<CallPart[]>;
}

/** The adapter, or the message saying which variable enables the vendor. */
export function createSingleChoiceAdapter(config: Config, spec: SingleChoiceVendor): VendorAdapter<GenerationPlanDetail> | string {
  const { vendor } = spec;
  const slice = parseVendorConfig(vendor, vendorSliceSchema, config.vendors[vendor]);
  const endpoint = resolveEndpoint({
    vendor,
    vendorEnv: config.vendorEnv,
    envPrefix: spec.envPrefix,
    sliceBaseUrl: slice.baseUrl,
    defaultBaseUrl: spec.defaultBaseUrl,
    keyRequired: true,
  });
  if (!endpoint.offered) return endpoint.hint;
  const apiKey = endpoint.apiKey;
  if (apiKey === null) throw new Error(`resolveEndpoint offered '${vendor}' without the key it requires`);
  const baseUrl = endpoint.baseUrl.replace(/\/+$/, '');
  const catalogue = createModelCatalogue(vendor, spec.models, slice.models, {
    contextWindow: slice.unlistedContextWindow,
    nativeCompletions: false,
    logprobs: false,
    allowUnlisted: slice.allowUnlistedModels,
  });
  const client = new UpstreamClient({ vendor, transport: slice, credentialVariable: endpoint.keyVariable, secrets: [apiKey], extractError: spec.extractError });

  const calls = (request: GenerationRequest, model: ModelInfo, requestId: string, plan: GenerationPlanDetail): PlannedCall[] => {
    if (plan.emptyAnswer) return [emptyAnswerCall(request, model, plan)];
    return plan.groups.map((group) => {
      const prompt = request.prompts[group.promptIndexes[0]];
      return {
        choiceOffset: group.choiceOffset,
        choiceCount: 1,
        echo: plan.gatewayEcho ? [promptText(prompt)] : null,
        stops: plan.gatewayStops,
        prompts: [prompt],
        vendorEcho: false,
        candidatesPerChoice: 1,
        countTokens: model.countTokens,
        run: (signal: AbortSignal) => spec.call({ request, model, plan, group, client, baseUrl, apiKey, requestId, signal }),
      };
    });
  };

  return {
    name: vendor,
    listModels: () => catalogue.list(),
    resolveModel: (name) => catalogue.resolve(name),
    prepare: (request) => spec.plan(vendor, request),
    stream(request, model, options): AsyncIterable<StreamPart[]> {
      const plan = options.plan ?? spec.plan(vendor, request);
      return runUpstreamCalls(calls(request, model, options.requestId, plan), {
        signal: options.signal,
        retry: slice,
        maxConcurrentCalls: slice.maxConcurrentCalls,
        reportUsage: options.reportUsage,
      });
    },
    close: () => client.close(),
  };
}
