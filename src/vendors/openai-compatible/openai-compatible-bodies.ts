/** Request bodies in the OpenAI wire format, shaped by what the preset says the server takes. */
import { JsonBody } from '../shared/json-body.js';
import { jsonString } from '../shared/json-string.js';
import type { CallGroup, GenerationPlanDetail } from '../shared/plan-generation.js';
import type { GenerationRequest, PromptInput } from '../types.js';
import type { OpenAICompatiblePreset } from './openai-compatible-preset.js';

export function completionsBody(preset: OpenAICompatiblePreset, request: GenerationRequest, plan: GenerationPlanDetail, group: CallGroup): JsonBody {
  const features = preset.native;
  const body = modelField(preset, request);
  if (group.promptIndexes.length === 1) addPrompt(body, request.prompts[group.promptIndexes[0]]);
  else body.value('prompt', group.promptIndexes.map((index) => promptValue(request.prompts[index])));
  body.number('max_tokens', request.maxTokens);
  if (features.nativeN) body.number('n', group.n);
  if (features.bestOf && request.bestOf !== null) body.number('best_of', request.bestOf);
  if (features.nativeEcho && request.echo) body.boolean('echo', true);
  if (request.logprobs !== null) body.number('logprobs', request.logprobs);
  if (features.suffix && request.suffix !== null) body.string('suffix', request.suffix);
  addSampling(preset, request, plan, group, body);
  addStream(preset, request, body);
  return body;
}

export function chatBody(preset: OpenAICompatiblePreset, request: GenerationRequest, plan: GenerationPlanDetail, group: CallGroup): JsonBody {
  const prompt = request.prompts[group.promptIndexes[0]];
  const body = modelField(preset, request);
  // One prompt, one conversation: the prompt is the user turn.
  body.raw('messages', `[{"role":"user","content":${jsonString(prompt.kind === 'text' ? prompt.text : '')}}]`);
  body.number(preset.chatMaxTokensField, request.maxTokens);
  if (preset.chatN && group.n > 1) body.number('n', group.n);
  addSampling(preset, request, plan, group, body);
  addStream(preset, request, body);
  return body;
}

function modelField(preset: OpenAICompatiblePreset, request: GenerationRequest): JsonBody {
  // Azure routes by the deployment in the URL; the body carries no model.
  const body = new JsonBody();
  return preset.urlStyle === 'azure' ? body : body.string('model', request.model);
}

function promptValue(prompt: PromptInput): string | number[] {
  return prompt.kind === 'text' ? prompt.text : prompt.tokens;
}

function addPrompt(body: JsonBody, prompt: PromptInput): void {
  if (prompt.kind === 'text') body.string('prompt', prompt.text);
  else body.value('prompt', prompt.tokens);
}

function addSampling(preset: OpenAICompatiblePreset, request: GenerationRequest, plan: GenerationPlanDetail, group: CallGroup, body: JsonBody): void {
  if (request.temperature !== null) body.number('temperature', request.temperature);
  if (request.topP !== null) body.number('top_p', request.topP);
  // Already within the server's range (and per replica) from the plan; written as exact digits,
  // since int64 seeds are not exact doubles.
  if (group.seed !== null) body.raw(preset.seedField, group.seed.toString());
  if (request.presencePenalty !== null) body.number('presence_penalty', request.presencePenalty);
  if (request.frequencyPenalty !== null) body.number('frequency_penalty', request.frequencyPenalty);
  if (request.logitBias !== null) body.value('logit_bias', request.logitBias);
  if (request.user !== null) body.string('user', request.user);
  if (plan.vendorStops.length > 0) body.value('stop', plan.vendorStops);
}

function addStream(preset: OpenAICompatiblePreset, request: GenerationRequest, body: JsonBody): void {
  if (!request.stream) return;
  body.boolean('stream', true);
  // Always ask for usage, even when the client did not: metering needs it.
  if (preset.streamUsage === 'stream_options') body.raw('stream_options', '{"include_usage":true}');
}
