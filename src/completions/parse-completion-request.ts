/** Validates a request body and normalises it into the adapter-facing GenerationRequest. */
import type { z } from 'zod';
import { invalidRequest, type GatewayError } from '../errors/gateway-error.js';
import type { GenerationRequest, PromptInput } from '../vendors/types.js';
import { completionRequestSchema, parameterMessages, type CompletionRequestBody } from './completion-request-schema.js';

export interface ParsedCompletionRequest {
  /** Which API the request came through: its answer is a text completion or a chat completion. */
  api: 'completions' | 'chat';
  /** `model` exactly as the caller wrote it. */
  model: string;
  stream: boolean;
  /** The client asked for the final usage chunk. */
  includeUsage: boolean;
  /** Everything but the model, normalised; `model` is filled in once the vendor is resolved. */
  generation: Omit<GenerationRequest, 'model'>;
  /** A chat request without `max_tokens`: it may use what the model's context window leaves (see completion-target.ts). */
  maxTokensOmitted: boolean;
}

export function parseCompletionRequest(body: unknown): ParsedCompletionRequest {
  const result = completionRequestSchema.safeParse(body);
  if (!result.success) throw toValidationError(result.error, body);
  const request = result.data;
  checkCombinations(request);
  const stream = request.stream === true;
  return {
    api: 'completions',
    model: request.model,
    maxTokensOmitted: false,
    stream,
    includeUsage: stream && request.stream_options?.include_usage === true,
    // include_obfuscation needs nothing: the gateway's chunks carry no obfuscation padding either way.
    generation: {
      prompts: normalisePrompts(request.prompt),
      n: request.n ?? 1,
      // best_of 0 asks for no ranking, as if it were not given.
      bestOf: request.best_of === 0 ? null : (request.best_of ?? null),
      maxTokens: request.max_tokens ?? 16,
      ...samplingOf(request),
      logprobs: request.logprobs ?? null,
      echo: request.echo === true,
      suffix: request.suffix ?? null,
      user: request.user ?? null,
      stream,
      messages: null,
    },
  };
}

function checkCombinations(request: CompletionRequestBody): void {
  checkStreamOptions(request);
  const n = request.n ?? 1;
  // best_of 0 ranks nothing: it stands for "not given" and is checked against nothing.
  if (request.best_of != null && request.best_of > 0) {
    if (request.best_of < n) throw invalidRequest(`'best_of' (${request.best_of}) must be greater than or equal to 'n' (${n}).`, 'best_of');
    // 1 ranks nothing either, so it streams like any request; OpenAI refuses only real ranking.
    if (request.stream === true && request.best_of > 1) throw invalidRequest("'best_of' above 1 cannot be used with 'stream'.", 'best_of');
  }
}

/** `stream_options` belongs to a stream. */
export function checkStreamOptions(request: { stream?: boolean | null; stream_options?: unknown }): void {
  if (request.stream_options != null && request.stream !== true) {
    throw invalidRequest("'stream_options' is only allowed when 'stream' is true.", 'stream_options');
  }
}

function normalisePrompts(prompt: CompletionRequestBody['prompt']): PromptInput[] {
  // OpenAI's default prompt: the document-start token, written as its text.
  if (prompt == null) return [{ kind: 'text', text: '<|endoftext|>' }];
  if (typeof prompt === 'string') return [{ kind: 'text', text: prompt }];
  if (typeof prompt[0] === 'number') return [{ kind: 'tokens', tokens: prompt as number[] }];
  if (typeof prompt[0] === 'string') return (prompt as string[]).map((text) => ({ kind: 'text', text }));
  return (prompt as number[][]).map((tokens) => ({ kind: 'tokens', tokens }));
}

/** The sampling fields both APIs take alike, normalised (null for "not given"). */
export function samplingOf(
  request: Pick<CompletionRequestBody, 'temperature' | 'top_p' | 'seed' | 'stop' | 'presence_penalty' | 'frequency_penalty' | 'logit_bias'>,
): Pick<GenerationRequest, 'temperature' | 'topP' | 'seed' | 'stop' | 'presencePenalty' | 'frequencyPenalty' | 'logitBias'> {
  return {
    temperature: request.temperature ?? null,
    topP: request.top_p ?? null,
    seed: request.seed ?? null,
    stop: normaliseStops(request.stop),
    presencePenalty: request.presence_penalty ?? null,
    frequencyPenalty: request.frequency_penalty ?? null,
    logitBias: request.logit_bias ?? null,
  };
}

/** Empty stop strings stop nothing: `""` and `[""]` mean no stop at all. */
function normaliseStops(stop: CompletionRequestBody['stop']): string[] {
  if (stop == null) return [];
  if (typeof stop === 'string') return stop.length > 0 ? [stop] : [];
  return stop.every((sequence) => sequence.length > 0) ? stop : stop.filter((sequence) => sequence.length > 0);
}

/** Formats the first zod issue as a 400 naming the parameter, e.g. `stop[2]` or `logit_bias.50256`. */
export function toValidationError(error: z.ZodError, body: unknown): GatewayError {
  const issue = error.issues[0];
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0];
    const where = issue.path.length ? `${formatPath(issue.path)}.` : '';
    return invalidRequest(`Unrecognized request argument supplied: '${where}${key}'.`, `${where}${key}`, 'unknown_parameter');
  }
  const param = issue.path.length ? formatPath(issue.path) : null;
  // Every schema message starts with the quoted parameter; anything else is the library's own wording.
  const message = issue.message.startsWith("'") || issue.message === parameterMessages.body ? issue.message : describeParameter(issue.path[0]);
  const missing =
    issue.path.length === 1 && body !== null && typeof body === 'object' && (body as Record<string, unknown>)[String(issue.path[0])] === undefined;
  const code = missing ? 'missing_required_parameter' : issue.code === 'invalid_type' ? 'invalid_type' : 'invalid_value';
  return invalidRequest(message, param, code);
}

function describeParameter(key: PropertyKey | undefined): string {
  const messages: Record<string, string> = parameterMessages;
  return typeof key === 'string' && Object.hasOwn(messages, key) ? messages[key] : parameterMessages.body;
}

function formatPath(path: PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}
