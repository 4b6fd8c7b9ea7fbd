/**
 * The one adapter for every server speaking the OpenAI wire format (OpenAI, Azure, vLLM, Ollama,
 * …); a preset says what the server can do. Non-stream requests make non-stream upstream calls;
 * streams stream, always asking for usage.
 */
import type { CallPart } from '../shared/call-part.js';
import { emptyAnswerCall } from '../shared/empty-answer-call.js';
import type { JsonBody } from '../shared/json-body.js';
import type { ModelCatalogue } from '../shared/model-catalogue.js';
import type { CallGroup } from '../shared/plan-generation.js';
import { promptText } from '../shared/plan-generation.js';
import { runUpstreamCalls, type PlannedCall } from '../shared/run-upstream-calls.js';
import type { TransportOptions } from '../shared/transport-options.js';
import { UpstreamClient } from '../shared/upstream-client.js';
import type { GenerationOptions, GenerationRequest, ModelInfo, StreamPart, VendorAdapter } from '../types.js';
import { extractOpenAIError } from '../openai/extract-openai-error.js';
import { chatResponseParts, chatStreamParts } from '../openai/parse-openai-chat.js';
import { completionResponseParts, completionStreamParts } from '../openai/parse-openai-completions.js';
import { chatBody, completionsBody } from './openai-compatible-bodies.js';
import { planOpenAICompatible, type OpenAICompatiblePlan } from './openai-compatible-plan.js';
import type { OpenAICompatiblePreset } from './openai-compatible-preset.js';
import { openaiCompatibleUrl } from './openai-compatible-url.js';

export interface OpenAICompatibleAdapterOptions {
  preset: OpenAICompatiblePreset;
  baseUrl: string;
  apiKey: string | null;
  /** The variable the key came from, named in credential errors. */
  apiKeyVariable: string | null;
  apiVersion: string | null;
  transport: TransportOptions;
  catalogue: ModelCatalogue;
}

export function createOpenAICompatibleAdapter(options: OpenAICompatibleAdapterOptions): VendorAdapter<OpenAICompatiblePlan> {
  const { preset, catalogue, transport } = options;
  const client = new UpstreamClient({
    vendor: preset.name,
    transport,
    credentialVariable: options.apiKeyVariable,
    secrets: options.apiKey ? [options.apiKey] : [],
    extractError: extractOpenAIError,
  });
  const authHeaders: Record<string, string> = {};
  if (options.apiKey) {
    if (preset.auth === 'api-key') authHeaders['api-key'] = options.apiKey;
    else authHeaders.authorization = `Bearer ${options.apiKey}`;
  }

  // One URL object per mode and model (models come from the catalogue; the cap only guards memory).
  // A map per mode, keyed by the catalogue's own name string, whose hash V8 keeps: a joined key
  // was a new string to hash on every request.
  const urls = { native: new Map<string, URL>(), chat: new Map<string, URL>() };
  const urlFor = (mode: 'native' | 'chat', modelName: string): URL => {
    const byModel = urls[mode];
    let url = byModel.get(modelName);
    if (!url) {
      if (byModel.size >= 1_000) byModel.clear();
      url = openaiCompatibleUrl(preset, options.baseUrl, mode, modelName, options.apiVersion);
      byModel.set(modelName, url);
    }
    return url;
  };

  const callFor = (request: GenerationRequest, model: ModelInfo, plan: OpenAICompatiblePlan, group: CallGroup, requestId: string): PlannedCall => {
    const prompts = group.promptIndexes.map((index) => request.prompts[index]);
    const choiceCount = prompts.length * group.n;
    const body = plan.mode === 'native' ? completionsBody(preset, request, plan, group) : chatBody(preset, request, plan, group);
    const url = urlFor(plan.mode, model.name);
    const streaming = request.stream;
    return {
      choiceOffset: group.choiceOffset,
      choiceCount,
      echo: plan.gatewayEcho ? Array.from({ length: choiceCount }, (_, local) => promptText(prompts[Math.floor(local / group.n)])) : null,
      stops: plan.gatewayStops,
      prompts,
      vendorEcho: request.echo && !plan.gatewayEcho,
      candidatesPerChoice: plan.mode === 'native' && request.bestOf !== null && request.bestOf > request.n ? request.bestOf / request.n : 1,
      countTokens: model.countTokens,
      run: (signal: AbortSignal) => callParts(client, { vendor: preset.name, mode: plan.mode, url, headers: { 'x-request-id': requestId, ...authHeaders }, body, streaming, model: model.name, choiceCount }, signal),
    };
  };

  return {
    name: preset.name,
    listModels: () => catalogue.list(),
    resolveModel: (name) => catalogue.resolve(name),
    prepare: (request, model) => planOpenAICompatible(preset, request, model),
    stream(request: GenerationRequest, model: ModelInfo, generation: GenerationOptions<OpenAICompatiblePlan>): AsyncIterable<StreamPart[]> {
      const plan = generation.plan ?? planOpenAICompatible(preset, request, model);
      const calls = plan.emptyAnswer ? [emptyAnswerCall(request, model, plan)] : plan.groups.map((group) => callFor(request, model, plan, group, generation.requestId));
      return runUpstreamCalls(calls, { signal: generation.signal, retry: transport, maxConcurrentCalls: transport.maxConcurrentCalls, reportUsage: generation.reportUsage });
    },
    close: () => client.close(),
  };
}

/** One upstream call, as what `callParts` needs of it. */
interface UpstreamCall {
  vendor: string;
  mode: OpenAICompatiblePlan['mode'];
  url: URL;
  headers: Record<string, string>;
  body: JsonBody;
  streaming: boolean;
  model: string;
  choiceCount: number;
}

/**
 * The call's parts. A module-level generator on purpose: calling an async generator function
 * created per request (a closure) made V8 keep everything the request touched through
 * young-generation GCs (README, "Objects that outlive their request").
 */
async function* callParts(client: UpstreamClient, call: UpstreamCall, signal: AbortSignal): AsyncGenerator<CallPart[]> {
  const response = await client.open({ url: call.url, headers: call.headers, body: call.body, streaming: call.streaming, signal, model: call.model });
  if (!call.streaming) {
    const text = await client.readText(response, signal);
    yield call.mode === 'native' ? completionResponseParts(call.vendor, text) : chatResponseParts(call.vendor, text);
    return;
  }
  const events = client.chunks(response, signal);
  yield* call.mode === 'native' ? completionStreamParts(call.vendor, events, call.choiceCount) : chatStreamParts(call.vendor, events, call.choiceCount);
}
