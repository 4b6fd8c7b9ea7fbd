/**
 * The one adapter for every server speaking the OpenAI wire format (OpenAI, Azure, vLLM, Ollama,
 * …); a preset says what the server can do. Non-stream requests make non-stream upstream calls;
 * streams stream, always asking for usage.
 */
import type { CallPart } from '../shared/call-part.js';
import type { ModelCatalogue } from '../shared/model-catalogue.js';
import { tryParseJson } from '../shared/parse-upstream-json.js';
import { plannedCalls } from '../shared/planned-calls.js';
import { runUpstreamCalls } from '../shared/run-upstream-calls.js';
import type { TransportOptions } from '../shared/transport-options.js';
import { UpstreamClient, type ExtractedError, type UpstreamRequest } from '../shared/upstream-client.js';
import type { GenerationOptions, GenerationRequest, ModelInfo, StreamPart, VendorAdapter } from '../types.js';
import { openaiErrorBodySchema } from './openai-compatible-api.js';
import { chatBody, completionsBody } from './openai-compatible-bodies.js';
import { planOpenAICompatible, type OpenAICompatiblePlan } from './openai-compatible-plan.js';
import type { OpenAICompatiblePreset } from './openai-compatible-preset.js';
import { chatFormat, completionFormat, responseParts, streamParts } from './parse-openai-compatible-response.js';

/** One OpenAI-compatible vendor, resolved from its preset, environment and config slice. */
export interface OpenAICompatibleAdapterOptions {
  preset: OpenAICompatiblePreset;
  baseUrl: string;
  /** The key sent in the preset's auth header; null for keyless servers. */
  apiKey: string | null;
  /** The variable the key came from, named in credential errors. */
  apiKeyVariable: string | null;
  /** Azure's api-version (`<PREFIX>_API_VERSION`); null for the preset's default. */
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
    extractError,
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
      url = callUrl(preset, options.baseUrl, mode, model, options.apiVersion);
      if (urls.size < 1_000) urls.set(key, url);
    }
    return url;
  };

  return {
    name: preset.name,
    listModels: () => catalogue.list(),
    resolveModel: (name) => catalogue.resolve(name),
    prepare: (request, model) => planOpenAICompatible(preset, request, model),
    stream(request: GenerationRequest, model: ModelInfo, generation: GenerationOptions<OpenAICompatiblePlan>): AsyncIterable<StreamPart[]> {
      const plan = generation.plan ?? planOpenAICompatible(preset, request, model);
      const native = plan.mode === 'native';
      const headers = { 'x-request-id': generation.requestId, ...authHeaders };
      const calls = plannedCalls(
        request,
        model,
        plan,
        (group, choiceCount) => {
          const body = native ? completionsBody(preset, request, plan, group) : chatBody(preset, request, plan, group);
          const url = urlFor(plan.mode, model.name);
          return (signal) => callParts(client, plan.mode, { url, headers, body, streaming: request.stream, signal, model: model.name }, choiceCount);
        },
        {
          vendorEcho: request.echo && !plan.gatewayEcho,
          candidatesPerChoice: native && request.bestOf !== null && request.bestOf > request.n ? request.bestOf / request.n : 1,
        },
      );
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

/** `{base}{path}`, or Azure's deployment URL with its api-version (AZURE_OPENAI_API_VERSION, else 2024-10-21). */
function callUrl(preset: OpenAICompatiblePreset, baseUrl: string, mode: 'native' | 'chat', model: string, apiVersion: string | null): URL {
  const base = baseUrl.replace(/\/+$/, '');
  if (preset.urlStyle === 'azure') {
    const operation = mode === 'native' ? 'completions' : 'chat/completions';
    const url = new URL(`${base}/openai/deployments/${encodeURIComponent(model)}/${operation}`);
    url.searchParams.set('api-version', apiVersion ?? '2024-10-21');
    return url;
  }
  const path = preset.paths[mode];
  // SDK-style base URLs often end in /v1 already (OPENAI_BASE_URL=https://api.openai.com/v1).
  return new URL(base.endsWith('/v1') && path.startsWith('/v1/') ? `${base}${path.slice(3)}` : `${base}${path}`);
}

/**
 * OpenAI answers a spent balance or a spend limit with 429, like a rate limit: its type
 * `insufficient_quota`, or one of these codes, tells them apart.
 */
const quotaCodes = new Set([
  'insufficient_quota',
  'credit_balance_exhausted',
  'organization_spend_limit_exceeded',
  'project_spend_limit_exceeded',
  'organization_usage_limit_exceeded',
]);

/** The message of an error body in any of the shapes OpenAI-compatible servers use; else its first 300 characters. */
function extractError(text: string): ExtractedError {
  const body = tryParseJson(openaiErrorBodySchema, text);
  if (!body) return { message: text.trim() ? text.trim().slice(0, 300) : null };
  const error = body.error;
  if (typeof error === 'string') return { message: error };
  const message = error?.message ?? body.message ?? (typeof body.detail === 'string' ? body.detail : null);
  const quotaExhausted = error?.type === 'insufficient_quota' || (typeof error?.code === 'string' && quotaCodes.has(error.code));
  return { message: message ?? null, ...(quotaExhausted ? { quotaExhausted } : {}) };
}
