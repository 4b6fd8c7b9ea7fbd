/**
 * The adapter shape of chat-only vendors whose every upstream call answers one prompt with one
 * choice (Anthropic, Gemini): endpoint and key from the environment, a model catalogue, one pooled
 * client, a plan that refuses what the vendor cannot honour and fans prompts × n out into calls (or
 * answers `max_tokens: 0` itself, with no call), and gateway-side echo and stops. A vendor supplies
 * what it honours, its URL, headers and request body, and its response parsing.
 */
import type { Config } from '../../config/config.js';
import type { VendorError } from '../../errors/vendor-error.js';
import type { GenerationRequest, ModelInfo, StreamPart, VendorAdapter } from '../types.js';
import type { CallPart } from './call-part.js';
import { refuseUnsendableTurns } from './conversation.js';
import { createModelCatalogue, type CatalogueEntry } from './model-catalogue.js';
import { planGeneration, promptText, type CallGroup, type GenerationPlanDetail, type VendorAbilities } from './plan-generation.js';
import { refuseAbove, refuseOutside, refuseUnsupported, tokenPromptReason, type RequestParam } from './refusals.js';
import { plannedCalls } from './planned-calls.js';
import { runUpstreamCalls, type PlannedCall } from './run-upstream-calls.js';
import { UpstreamClient, type ExtractedError } from './upstream-client.js';
import { parseVendorConfig, resolveEndpoint, vendorSliceSchema } from './vendor-config.js';

/** Builds the VendorError for an error the vendor reports inside an answer or a stream. */
export type VendorFailure = (status: number, message: string | null, retryAfterSeconds?: number | null) => VendorError;

export interface SingleChoiceVendor extends Pick<VendorAbilities, 'maxStops' | 'acceptsStop' | 'seedRange'> {
  vendor: string;
  /** `ANTHROPIC` → ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL. */
  envPrefix: string;
  defaultBaseUrl: string;
  models: CatalogueEntry[];
  /** Parameters with no equivalent, with the reason given to clients (token prompts are always refused). */
  unsupported: Partial<Record<RequestParam, string>>;
  /** Ours reach 2: a temperature above this is refused, never clamped. */
  maxTemperature: number;
  /** The presence and frequency penalties the vendor takes, from `min` up to but not including `below`. */
  penaltyRange?: { min: number; below: number };
  /** The headers carrying the key (the request id is added). */
  headers(apiKey: string): Record<string, string>;
  /** Where one call goes; `baseUrl` has no trailing slash. */
  url(baseUrl: string, model: string, stream: boolean): string;
  /** One call's body: one prompt, one conversation, `prompt` being its single user turn. */
  body(request: GenerationRequest, plan: GenerationPlanDetail, group: CallGroup, prompt: string): Record<string, unknown>;
  extractError(text: string): ExtractedError;
  /** A whole answer → its call parts. */
  responseParts(vendor: string, text: string, failure: VendorFailure): CallPart[];
  /** A streamed answer → batches of call parts. */
  streamParts(vendor: string, body: AsyncIterable<Buffer>, failure: VendorFailure): AsyncIterable<CallPart[]>;
}

/** The adapter, or the message saying which variable enables the vendor. */
export function createSingleChoiceAdapter(config: Config, spec: SingleChoiceVendor): VendorAdapter<GenerationPlanDetail> | string {
  const { vendor } = spec;
  const slice = parseVendorConfig(vendor, vendorSliceSchema, config.vendors[vendor]);
  const endpoint = resolveEndpoint(config, slice.baseUrl, {
    name: vendor,
    envPrefix: spec.envPrefix,
    defaultBaseUrl: spec.defaultBaseUrl,
    keyRequired: true,
  });
  if (!endpoint.offered) return endpoint.hint;
  const apiKey = endpoint.apiKey;
  if (apiKey === null) throw new Error(`resolveEndpoint offered '${vendor}' without the key it requires`);
  const baseUrl = endpoint.baseUrl.replace(/\/+$/, '');
  const authHeaders = spec.headers(apiKey);
  const catalogue = createModelCatalogue(vendor, spec.models, slice, { nativeCompletions: false, logprobs: false });
  const client = new UpstreamClient({ vendor, transport: slice, credentialVariable: endpoint.keyVariable, secrets: [apiKey], extractError: spec.extractError });

  const unsupported = { prompt: tokenPromptReason, ...spec.unsupported };
  const { maxStops, acceptsStop, seedRange } = spec;
  const abilities: VendorAbilities = { promptList: false, nativeN: false, nativeEcho: false, maxStops, acceptsStop, seedRange, zeroMaxTokens: false };
  const plan = (request: GenerationRequest): GenerationPlanDetail => {
    refuseUnsupported(request, vendor, unsupported);
    refuseUnsendableTurns(request, vendor);
    refuseAbove(vendor, 'temperature', request.temperature, spec.maxTemperature);
    const penalties = spec.penaltyRange;
    if (penalties) {
      refuseOutside(vendor, 'presence_penalty', request.presencePenalty, penalties.min, penalties.below);
      refuseOutside(vendor, 'frequency_penalty', request.frequencyPenalty, penalties.min, penalties.below);
    }
    return planGeneration(request, abilities);
  };

  const calls = (request: GenerationRequest, model: ModelInfo, requestId: string, plan: GenerationPlanDetail): PlannedCall[] => {
    const failure: VendorFailure = (status, message, retryAfterSeconds) => client.failure(status, message, model.name, retryAfterSeconds);
    async function* run(group: CallGroup, signal: AbortSignal): AsyncGenerator<CallPart[]> {
      const url = new URL(spec.url(baseUrl, model.name, request.stream));
      const headers = { ...authHeaders, 'x-request-id': requestId };
      const body = JSON.stringify(spec.body(request, plan, group, promptText(request.prompts[group.promptIndexes[0]])));
      const response = await client.open({ url, headers, body, streaming: request.stream, signal, model: model.name });
      if (request.stream) yield* spec.streamParts(vendor, client.chunks(response, signal), failure);
      else yield spec.responseParts(vendor, await client.readText(response, signal), failure);
    }
    return plannedCalls(request, model, plan, (group) => (signal) => run(group, signal));
  };

  return {
    name: vendor,
    listModels: () => catalogue.list(),
    resolveModel: (name) => catalogue.resolve(name),
    prepare: (request) => plan(request),
    stream(request, model, options): AsyncIterable<StreamPart[]> {
      return runUpstreamCalls(calls(request, model, options.requestId, options.plan ?? plan(request)), {
        signal: options.signal,
        retry: slice,
        maxConcurrentCalls: slice.maxConcurrentCalls,
        reportUsage: options.reportUsage,
      });
    },
    close: () => client.close(),
  };
}
