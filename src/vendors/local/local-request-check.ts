/**
 * What the local vendor checks before generating, and the request in model terms: prompt token ids
 * and sampling settings over the model's vocabulary. The context window is checked for every vendor
 * by the pipeline (completions/check-context-window.ts).
 */
import { invalidRequest, unsupportedParameter } from '../../errors/gateway-error.js';
import { MAX_OUTSIDE_TOKENS, resolveLogitBias } from '../../local-model/logit-bias.js';
import type { LocalNgramModel } from '../../local-model/ngram-model.js';
import type { LocalSamplingSettings } from '../../local-model/sampler.js';
import { isKnownToken, LAST_ORDINARY_TOKEN, SPECIAL_TOKEN_IDS } from '../../local-model/token-text.js';
import { decodeTokens } from '../../tokenizer/tokenizer.js';
import type { GenerationRequest, ModelInfo } from '../types.js';
import { encodePrompt, LOCAL_VENDOR } from './local-models.js';

export interface LocalCheckedRequest {
  /** Per prompt: the cl100k ids the model conditions on (and usage counts), and the text echo returns. */
  prompts: Array<{ tokens: number[]; text: string }>;
  sampling: LocalSamplingSettings;
}

export function checkLocalRequest(request: GenerationRequest, model: ModelInfo, ngram: LocalNgramModel): LocalCheckedRequest {
  // An n-gram sees only the tokens before the insertion point, so a suffix is refused, never ignored.
  if (request.suffix !== null && request.suffix.length > 0) {
    throw unsupportedParameter('suffix', LOCAL_VENDOR, 'the local n-gram model only continues text and cannot condition on a suffix (fill-in-the-middle)');
  }
  const prompts = request.prompts.map((prompt, index) => {
    if (prompt.kind === 'text') return { tokens: encodePrompt(prompt.text), text: prompt.text };
    const unknown = prompt.tokens.find((id) => !isKnownToken(id));
    if (unknown !== undefined) {
      throw invalidRequest(
        `Prompt ${index} contains ${String(unknown)}, which is not a cl100k_base token id (0–${LAST_ORDINARY_TOKEN}, or a special token: ${SPECIAL_TOKEN_IDS.join(', ')}).`,
        'prompt',
        'invalid_token',
      );
    }
    return { tokens: prompt.tokens, text: decodeTokens(prompt.tokens) };
  });
  return { prompts, sampling: samplingSettings(request, model, ngram) };
}

function samplingSettings(request: GenerationRequest, model: ModelInfo, ngram: LocalNgramModel): LocalSamplingSettings {
  const bias: Array<[number, number]> = [];
  for (const [key, value] of Object.entries(request.logitBias ?? {})) {
    const id = /^\d{1,6}$/.test(key) ? Number(key) : Number.NaN;
    if (!isKnownToken(id)) {
      throw invalidRequest(
        `logit_bias names token '${key.slice(0, 40)}', which is not in the cl100k_base vocabulary of ${model.id} (ids 0–${LAST_ORDINARY_TOKEN} and the special tokens ${SPECIAL_TOKEN_IDS.join(', ')}), so the model can neither favour nor avoid it.`,
        'logit_bias',
        'invalid_logit_bias',
      );
    }
    if (typeof value !== 'number' || !Number.isFinite(value) || value < -100 || value > 100) {
      throw invalidRequest(`logit_bias values must be numbers from -100 to 100; '${key}' has ${String(value)}.`, 'logit_bias', 'invalid_logit_bias');
    }
    bias.push([id, value]);
  }
  if (bias.filter(([id, value]) => value > 0 && ngram.indexOf(id) < 0).length > MAX_OUTSIDE_TOKENS) {
    throw invalidRequest(
      `logit_bias may raise at most ${MAX_OUTSIDE_TOKENS} tokens that ${model.id} never saw in training.`,
      'logit_bias',
      'invalid_logit_bias',
    );
  }
  return {
    temperature: request.temperature ?? 1,
    topP: request.topP ?? 1,
    ...resolveLogitBias(ngram, bias),
    presencePenalty: request.presencePenalty ?? 0,
    frequencyPenalty: request.frequencyPenalty ?? 0,
  };
}
