/** Request bodies in the OpenAI wire format, shaped by what the preset says the server takes. */
import type { CallGroup, GenerationPlanDetail } from '../shared/plan-generation.js';
import type { GenerationRequest, PromptInput } from '../types.js';
import type { OpenAICompatiblePreset } from './openai-compatible-preset.js';

type Body = Record<string, unknown>;

export function completionsBody(preset: OpenAICompatiblePreset, request: GenerationRequest, plan: GenerationPlanDetail, group: CallGroup): Body {
  const prompts = group.promptIndexes.map((index) => request.prompts[index]);
  const features = preset.native;
  const body: Body = modelField(preset, request);
  body.prompt = prompts.length === 1 ? promptValue(prompts[0]) : prompts.map(promptValue);
  body.max_tokens = request.maxTokens;
  if (features.nativeN) body.n = group.n;
  if (features.bestOf && request.bestOf !== null) body.best_of = request.bestOf;
  if (features.nativeEcho && request.echo) body.echo = true;
  if (request.logprobs !== null) body.logprobs = request.logprobs;
  if (features.suffix && request.suffix !== null) body.suffix = request.suffix;
  addSampling(preset, request, plan, group, body);
  addStream(preset, request, body);
  return body;
}

export function chatBody(preset: OpenAICompatiblePreset, request: GenerationRequest, plan: GenerationPlanDetail, group: CallGroup): Body {
  const prompt = request.prompts[group.promptIndexes[0]];
  const body: Body = modelField(preset, request);
  // One prompt, one conversation: the prompt is the user turn.
  body.messages = [{ role: 'user', content: prompt.kind === 'text' ? prompt.text : '' }];
  body[preset.chatMaxTokensField] = request.maxTokens;
  if (preset.chatN && group.n > 1) body.n = group.n;
  addSampling(preset, request, plan, group, body);
  addStream(preset, request, body);
  return body;
}

function modelField(preset: OpenAICompatiblePreset, request: GenerationRequest): Body {
  // Azure routes by the deployment in the URL; the body carries no model.
  return preset.urlStyle === 'azure' ? {} : { model: request.model };
}

function promptValue(prompt: PromptInput): string | number[] {
  return prompt.kind === 'text' ? prompt.text : prompt.tokens;
}

function addSampling(preset: OpenAICompatiblePreset, request: GenerationRequest, plan: GenerationPlanDetail, group: CallGroup, body: Body): void {
  if (request.temperature !== null) body.temperature = request.temperature;
  if (request.topP !== null) body.top_p = request.topP;
  // Emulated n: replica j gets seed + j, so the n choices differ and each stays reproducible.
  if (request.seed !== null) body[preset.seedField] = request.seed + group.replica;
  if (request.presencePenalty !== null) body.presence_penalty = request.presencePenalty;
  if (request.frequencyPenalty !== null) body.frequency_penalty = request.frequencyPenalty;
  if (request.logitBias !== null) body.logit_bias = request.logitBias;
  if (request.user !== null) body.user = request.user;
  if (plan.vendorStops.length > 0) body.stop = plan.vendorStops;
}

function addStream(preset: OpenAICompatiblePreset, request: GenerationRequest, body: Body): void {
  if (!request.stream) return;
  body.stream = true;
  // Always ask for usage, even when the client did not: metering needs it.
  if (preset.streamUsage === 'stream_options') body.stream_options = { include_usage: true };
}
