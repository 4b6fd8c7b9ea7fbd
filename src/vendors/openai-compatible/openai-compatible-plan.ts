/**
 * `prepare` for every OpenAI-compatible server: refuse what the server (in the model's mode)
 * cannot honour, then plan the calls. Native mode passes parameters through; chat mode sends each
 * prompt as its own one-message conversation. Seeds are wrapped into the preset's seed range, and
 * `max_tokens: 0` goes upstream only where the server answers it (OpenAI's completions); elsewhere
 * the gateway answers it without a call.
 */
import { unsupportedParameter } from '../../errors/gateway-error.js';
import { planGeneration, type GenerationPlanDetail } from '../shared/plan-generation.js';
import { inUse, refuseUnemulatedZeroTokens, refuseUnsupported, tokenPromptReason } from '../shared/refusals.js';
import type { GenerationRequest, ModelInfo } from '../types.js';
import type { OpenAICompatiblePreset } from './openai-compatible-preset.js';

/** The shared plan, and which of the server's endpoints the model is served through. */
export interface OpenAICompatiblePlan extends GenerationPlanDetail {
  /** `native`: /v1/completions; `chat`: /v1/chat/completions with one user turn per prompt. */
  mode: 'native' | 'chat';
}

export function planOpenAICompatible(preset: OpenAICompatiblePreset, request: GenerationRequest, model: ModelInfo): OpenAICompatiblePlan {
  const vendor = preset.name;
  refuseUnsupported(request, vendor, preset.unsupported);
  const features = preset.native;
  // A conversation always goes to the chat endpoint.
  const native = model.capabilities.nativeCompletions && request.messages === null;
  if (native) {
    if (!features.tokenPrompts && inUse(request, 'prompt')) throw unsupportedParameter('prompt', vendor, tokenPromptReason);
    if (!features.bestOf && inUse(request, 'best_of')) throw unsupportedParameter('best_of', vendor, 'the server cannot rank candidates');
    if (!features.suffix && inUse(request, 'suffix')) throw unsupportedParameter('suffix', vendor, 'the server has no insertion mode');
    if (inUse(request, 'logprobs') && !(features.logprobs && model.capabilities.logprobs)) {
      throw unsupportedParameter('logprobs', vendor, `'${model.id}' does not return token logprobs`);
    }
    if (request.echo && request.logprobs !== null && !features.nativeEcho) {
      throw unsupportedParameter('echo', vendor, 'echo with logprobs needs logprobs of the prompt tokens, which only the server itself could return');
    }
    if (!features.zeroMaxTokens) refuseUnemulatedZeroTokens(request, vendor);
  } else {
    if (inUse(request, 'prompt')) throw unsupportedParameter('prompt', vendor, tokenPromptReason);
    if (inUse(request, 'suffix')) throw unsupportedParameter('suffix', vendor, `'${model.id}' is a chat model with no insertion mode`);
    if (inUse(request, 'best_of')) throw unsupportedParameter('best_of', vendor, `'${model.id}' is a chat model and cannot rank candidates`);
    if (inUse(request, 'logprobs') && request.messages === null)
      throw unsupportedParameter('logprobs', vendor, `'${model.id}' is served through chat completions, whose logprobs do not map onto completions logprobs`);
    if (inUse(request, 'logprobs') && !features.logprobs) throw unsupportedParameter('logprobs', vendor, 'the server returns no token logprobs');
  }
  // Completions allow up to 4 stop sequences and so do OpenAI-compatible chat endpoints. Chat
  // endpoints want at least one output token: max_tokens 0 is answered by the gateway.
  const limits = { maxStops: 4, seedRange: preset.seedRange };
  const detail = planGeneration(
    request,
    native ? { ...features, ...limits } : { promptList: false, nativeN: preset.chatN, nativeEcho: false, zeroMaxTokens: false, ...limits },
  );
  const mode: OpenAICompatiblePlan['mode'] = native ? 'native' : 'chat';
  // Object.assign rather than `{ ...detail, mode }`: see docs/performance.md, "Objects that outlive their request".
  return Object.assign({ mode }, detail);
}
