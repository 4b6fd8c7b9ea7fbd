/** Request bodies in the OpenAI wire format, shaped by what the preset says the server takes, as JSON text. */
import { conversationOf } from '../shared/conversation.js';
import { promptText, type CallGroup, type GenerationPlanDetail } from '../shared/plan-generation.js';
import type { GenerationRequest, PromptInput } from '../types.js';
import type { OpenAICompatiblePreset } from './openai-compatible-preset.js';

type Body = Record<string, unknown>;

export function completionsBody(preset: OpenAICompatiblePreset, request: GenerationRequest, plan: GenerationPlanDetail, group: CallGroup): string {
  const features = preset.native;
  const prompts = group.promptIndexes.map((index) => promptValue(request.prompts[index]));
  const body = modelField(preset, request);
  body.prompt = prompts.length === 1 ? prompts[0] : prompts;
  body.max_tokens = request.maxTokens;
  if (features.nativeN) body.n = group.n;
  if (features.bestOf && request.bestOf !== null) body.best_of = request.bestOf;
  if (features.nativeEcho && request.echo) body.echo = true;
  if (request.logprobs !== null) body.logprobs = request.logprobs;
  if (features.suffix && request.suffix !== null) body.suffix = request.suffix;
  return finishBody(preset, request, plan, group, body);
}

export function chatBody(preset: OpenAICompatiblePreset, request: GenerationRequest, plan: GenerationPlanDetail, group: CallGroup): string {
  const body = modelField(preset, request);
  // A chat completion's own conversation; else one prompt, one conversation: the prompt is the user turn.
  body.messages = conversationOf(request, promptText(request.prompts[group.promptIndexes[0]]));
  body[preset.chatMaxTokensField] = request.maxTokens;
  if (preset.chatN && group.n > 1) body.n = group.n;
  // Only a chat completion asks for logprobs here: they come back in chat's own shape.
  if (request.messages !== null && request.logprobs !== null) {
    body.logprobs = true;
    if (request.logprobs > 0) body.top_logprobs = request.logprobs;
  }
  return finishBody(preset, request, plan, group, body);
}

/** The body's first field: the model, except on Azure, which routes by the deployment in the URL. */
function modelField(preset: OpenAICompatiblePreset, request: GenerationRequest): Body {
  return preset.urlStyle === 'azure' ? {} : { model: request.model };
}

function promptValue(prompt: PromptInput): string | number[] {
  return prompt.kind === 'text' ? prompt.text : prompt.tokens;
}

/** The fields both bodies share (sampling, stop, stream), then the body's JSON with its seed. */
function finishBody(preset: OpenAICompatiblePreset, request: GenerationRequest, plan: GenerationPlanDetail, group: CallGroup, body: Body): string {
  if (request.temperature !== null) body.temperature = request.temperature;
  if (request.topP !== null) body.top_p = request.topP;
  if (request.presencePenalty !== null) body.presence_penalty = request.presencePenalty;
  if (request.frequencyPenalty !== null) body.frequency_penalty = request.frequencyPenalty;
  if (request.logitBias !== null) body.logit_bias = request.logitBias;
  if (request.user !== null) body.user = request.user;
  if (plan.vendorStops.length > 0) body.stop = plan.vendorStops;
  if (request.stream) {
    body.stream = true;
    // Always ask for usage, even when the client did not: metering needs it.
    if (preset.streamUsage === 'stream_options') body.stream_options = { include_usage: true };
  }
  return withSeed(body, preset.seedField, group.seed);
}

/**
 * The body's JSON with the seed as its last field, in exact digits. The plan already put the seed
 * in the server's range (one per replica), but an int64 is not always an exact double and
 * `JSON.stringify` cannot write a bigint, so this is the one place its digits are written by hand.
 */
export function withSeed(body: Body, field: string, seed: bigint | null): string {
  const json = JSON.stringify(body);
  if (seed === null) return json;
  const separator = json === '{}' ? '' : ',';
  return `${json.slice(0, -1)}${separator}${JSON.stringify(field)}:${seed.toString()}}`;
}
