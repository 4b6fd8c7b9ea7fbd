/** Shared pieces of the vendor adapter tests: a Config-like object, requests, collecting parts. */
import type { Config } from '../../src/config/config.js';
import type { GenerationRequest, StreamPart, Usage, VendorAdapter, ModelInfo } from '../../src/vendors/types.js';

/** A part the adapter yielded, or a usage it reported (appended at the moment it was reported). */
export type CollectedPart = StreamPart | { type: 'usage'; usage: Usage };

/** Tiny timeouts and backoffs so failure tests stay fast. */
export const fastTransport = {
  connectTimeoutMs: 1_000,
  idleTimeoutMs: 1_500,
  responseTimeoutMs: 1_500,
  maxRetries: 2,
  retryBaseDelayMs: 5,
  retryMaxDelayMs: 20,
  maxRetryAfterMs: 5_000,
};

/** Adapters read only `vendors` and `vendorEnv`; the rest is filler (cast so new Config fields do not break these tests). */
export function testConfig(vendorEnv: Record<string, string>, vendors: Record<string, Record<string, unknown>> = {}): Config {
  const config = {
    host: '127.0.0.1',
    port: 0,
    databaseUrl: 'sqlite::memory:',
    redisUrl: null,
    adminKey: null,
    logLevel: 'silent',
    bodyLimitBytes: 4 * 1024 * 1024,
    keepAliveIntervalMs: 15_000,
    shutdownGraceMs: 1_000,
    corsOrigins: [],
    vendors,
    aliases: {},
    vendorEnv,
  };
  return config as unknown as Config;
}

export function request(overrides: Partial<GenerationRequest> & { prompt?: string | string[] } = {}): GenerationRequest {
  const { prompt, ...rest } = overrides;
  const texts = prompt === undefined ? ['Say hi'] : Array.isArray(prompt) ? prompt : [prompt];
  return {
    model: 'model',
    prompts: texts.map((text) => ({ kind: 'text' as const, text })),
    n: 1,
    bestOf: null,
    maxTokens: 16,
    temperature: null,
    topP: null,
    seed: null,
    stop: [],
    presencePenalty: null,
    frequencyPenalty: null,
    logitBias: null,
    logprobs: null,
    echo: false,
    suffix: null,
    user: null,
    stream: true,
    messages: null,
    ...rest,
  };
}

export function adapterOf(result: VendorAdapter | string): VendorAdapter {
  if (typeof result === 'string') throw new Error(`adapter not offered: ${result}`);
  return result;
}

export function modelOf(adapter: VendorAdapter, name: string): ModelInfo {
  const model = adapter.resolveModel(name);
  if (!model) throw new Error(`no model ${name}`);
  return model;
}

export async function collect(adapter: VendorAdapter, generation: GenerationRequest, signal = new AbortController().signal): Promise<CollectedPart[]> {
  const model = modelOf(adapter, generation.model);
  adapter.prepare(generation, model);
  const parts: CollectedPart[] = [];
  const reportUsage = (usage: Usage) => parts.push({ type: 'usage', usage });
  for await (const batch of adapter.stream(generation, model, { signal, requestId: 'req_test', reportUsage })) parts.push(...batch);
  return parts;
}

/** Collects until the iterator throws; returns what came before and the error. */
export async function collectUntilError(
  adapter: VendorAdapter,
  generation: GenerationRequest,
  signal = new AbortController().signal,
): Promise<{ parts: CollectedPart[]; error: any }> {
  const parts: CollectedPart[] = [];
  const reportUsage = (usage: Usage) => parts.push({ type: 'usage', usage });
  try {
    for await (const batch of adapter.stream(generation, modelOf(adapter, generation.model), { signal, requestId: 'req_test', reportUsage }))
      parts.push(...batch);
  } catch (error) {
    return { parts, error };
  }
  throw new Error(`expected an error, got ${JSON.stringify(parts)}`);
}

export function textOf(parts: CollectedPart[], choice = 0): string {
  return parts
    .filter((part): part is Extract<StreamPart, { type: 'text-delta' }> => part.type === 'text-delta' && part.choice === choice)
    .map((part) => part.text)
    .join('');
}

export function finishes(parts: CollectedPart[]): Record<number, string> {
  const result: Record<number, string> = {};
  for (const part of parts) if (part.type === 'finish') result[part.choice] = part.finishReason;
  return result;
}

export function usages(parts: CollectedPart[]) {
  return parts.filter((part): part is Extract<CollectedPart, { type: 'usage' }> => part.type === 'usage').map((part) => part.usage);
}
