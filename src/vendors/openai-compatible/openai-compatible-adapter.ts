/**
 * The one adapter for every server speaking the OpenAI wire format (OpenAI, Azure, vLLM, Ollama,
 * …); a preset says what the server can do. Non-stream requests make non-stream upstream calls;
 * streams stream, always asking for usage.
 */
import type { CallPart } from '../shared/call-part.js';
import { emptyAnswerCall } from '../shared/empty-answer-call.js';
import type { ModelCatalogue } from '../shared/model-catalogue.js';
import { promptText, type CallGroup } from '../shared/plan-generation.js';
import { runUpstreamCalls, type PlannedCall } from '../shared/run-upstream-calls.js';
import type { TransportOptions } from '../shared/transport-options.js';
import { UpstreamClient, type UpstreamRequest } from '../shared/upstream-client.js';
import type { GenerationOptions, GenerationRequest, ModelInfo, StreamPart, VendorAdapter } from '../types.js';
import { extractOpenAICompatibleError } from './extract-openai-compatible-error.js';
import { chatBody, completionsBody } from './openai-compatible-bodies.js';
import { planOpenAICompatible, type OpenAICompatiblePlan } from './openai-compatible-plan.js';
import type { OpenAICompatiblePreset } from './openai-compatible-preset.js';
import { openaiCompatibleUrl } from './openai-compatible-url.js';
import { chatFormat, completionFormat, responseParts, streamParts } from './parse-openai-compatible-response.js';

/** One OpenAI-compatible vendor, resolved from its preset, environment and config slice. */
export interface OpenAICompatibleAdapterOptions {
  /** What the server can do. */
  preset: OpenAICompatiblePreset;
  /** The server's base URL, as configured. */
  baseUrl: string;
  /** The key sent in the preset's auth header; null for keyless servers. */
  apiKey: string | null;
  /** The variable the key came from, named in credential errors. */
  apiKeyVariable: string | null;
  /** Azure's api-version (`<PREFIX>_API_VERSION`); null for the preset's default. */
  apiVersion: string | null;
  /** Pool size, time limits, retries. */
  transport: TransportOptions;
  /** The models offered. */
  catalogue: ModelCatalogue;
}

export function createOpenAICompatibleAdapter(options: OpenAICompatibleAdapterOptions): VendorAdapter<OpenAICompatiblePlan> {
  const { preset, catalogue, transport } = options;
  const client = new UpstreamClient({
    vendor: preset.name,
    transport,
    credentialVariable: options.apiKeyVariable,
    secrets: options.apiKey ? [options.apiKey] : [],
    extractError: extractOpenAICompatibleError,
  });
  const authHeaders: Record<string, string> = {};
  if (options.apiKey) {
    if (preset.auth === 'api-key') authHeaders['api-key'] = options.apiKey;
    else authHeaders.authorization = `Bearer ${options.apiKey}`;
  }

  // One URL per mode and model, built at its first call (models come from the catalogue).
  const urls = new Map<string, URL>();
  const urlFor = (mode: OpenAICompatiblePlan['mode'], model: string): URL => {
    const key = `${mode} ${model}`;
    let url = urls.get(key);
    if (url === undefined) {
      url = openaiCompatibleUrl(preset, options.baseUrl, mode, model, options.apiVersion);
      if (urls.size < 1_000) urls.set(key, url);
    }
    return url;
  };

  const callFor = (request: GenerationRequest, model: ModelInfo, plan: OpenAICompatiblePlan, group: CallGroup, requestId: string): PlannedCall => {
    const prompts = group.promptIndexes.map((index) => request.prompts[index]);
    const choiceCount = prompts.length * group.n;
    const body = plan.mode === 'native' ? completionsBody(preset, request, plan, group) : chatBody(preset, request, plan, group);
    const url = urlFor(plan.mode, model.name);
    const headers = { 'x-request-id': requestId, ...authHeaders };
    return {
      choiceOffset: group.choiceOffset,
      choiceCount,
      echo: plan.gatewayEcho ? Array.from({ length: choiceCount }, (_, local) => promptText(prompts[Math.floor(local / group.n)])) : null,
      stops: plan.gatewayStops,
      prompts,
      vendorEcho: request.echo && !plan.gatewayEcho,
      candidatesPerChoice: plan.mode === 'native' && request.bestOf !== null && request.bestOf > request.n ? request.bestOf / request.n : 1,
      countTokens: model.countTokens,
      run: (signal: AbortSignal) => callParts(client, plan.mode, { url, headers, body, streaming: request.stream, signal, model: model.name }, choiceCount),
    };
  };

  return {
    name: preset.name,
    listModels: () => catalogue.list(),
    resolveModel: (name) => catalogue.resolve(name),
    prepare: (request, model) => planOpenAICompatible(preset, request, model),
    stream(request: GenerationRequest, model: ModelInfo, generation: GenerationOptions<OpenAICompatiblePlan>): AsyncIterable<StreamPart[]> {
      const plan = generation.plan ?? planOpenAICompatible(preset, request, model);
      const calls = plan.emptyAnswer
        ? [emptyAnswerCall(request, model, plan)]
        : plan.groups.map((group) => callFor(request, model, plan, group, generation.requestId));
      return runUpstreamCalls(calls, {
        signal: generation.signal,
        retry: transport,
        maxConcurrentCalls: transport.maxConcurrentCalls,
        reportUsage: generation.reportUsage,
      });
    },
    close: () => client.close(),
  };
}

/** One upstream call's answer, whole or streamed, as batches of call parts. */
async function* callParts(
  client: UpstreamClient,
  mode: OpenAICompatiblePlan['mode'],
  request: UpstreamRequest,
  choiceCount: number,
): AsyncGenerator<CallPart[]> {
  const response = await client.open(request);
  if (!request.streaming) {
    const text = await client.readText(response, request.signal);
    yield mode === 'native' ? responseParts(client.vendor, completionFormat, text) : responseParts(client.vendor, chatFormat, text);
    return;
  }
  const chunks = client.chunks(response, request.signal);
  yield* mode === 'native' ? streamParts(client.vendor, completionFormat, chunks, choiceCount) : streamParts(client.vendor, chatFormat, chunks, choiceCount);
}
