/**
 * `anthropic/*` → Messages API `POST {base}/v1/messages` (anthropic-version 2023-06-01, x-api-key).
 * Claude models are chat-only: each call answers one prompt with one choice, and the shared
 * single-choice adapter emulates the rest, including `max_tokens: 0` (the Messages API wants at
 * least 1) and the stop sequences Anthropic rejects.
 */
import type { Config } from '../../config/config.js';
import { catalogueEntries } from '../shared/model-catalogue.js';
import { createSingleChoiceAdapter } from '../shared/single-choice-adapter.js';
import { conversationOf, systemAndTurns } from '../shared/conversation.js';
import type { VendorAdapter } from '../types.js';
import { anthropicMessageParts, anthropicStreamParts, extractAnthropicError } from './parse-anthropic-response.js';

/** The adapter, or the message saying which variable enables it (ANTHROPIC_API_KEY). */
export function createAnthropicAdapter(config: Config): VendorAdapter | string {
  return createSingleChoiceAdapter(config, {
    vendor: 'anthropic',
    envPrefix: 'ANTHROPIC',
    defaultBaseUrl: 'https://api.anthropic.com',
    models: catalogueEntries(200_000, [
      'claude-opus-4-1',
      'claude-opus-4-0',
      'claude-sonnet-4-5',
      'claude-sonnet-4-0',
      'claude-3-7-sonnet-latest',
      'claude-haiku-4-5',
      'claude-3-5-haiku-latest',
    ]),
    unsupported: {
      logprobs: 'Anthropic returns no token logprobs',
      logit_bias: 'Anthropic has no logit_bias',
      best_of: 'Anthropic cannot rank candidates',
      suffix: 'Anthropic has no insertion mode',
      seed: 'Anthropic has no seed',
      presence_penalty: 'Anthropic has no presence penalty',
      frequency_penalty: 'Anthropic has no frequency penalty',
    },
    maxTemperature: 1,
    maxStops: Number.MAX_SAFE_INTEGER,
    // The Messages API answers 400 to stop sequences without a non-whitespace character.
    acceptsStop: (stop) => /\S/.test(stop),
    seedRange: null,
    headers: (apiKey) => ({ 'x-api-key': apiKey, 'anthropic-version': '2023-06-01' }),
    url: (baseUrl) => `${baseUrl}/v1/messages`,
    body(request, plan, _group, prompt) {
      const { system, turns } = systemAndTurns(conversationOf(request, prompt));
      const body: Record<string, unknown> = { model: request.model, max_tokens: request.maxTokens };
      if (system !== null) body.system = system;
      body.messages = turns;
      if (plan.vendorStops.length > 0) body.stop_sequences = plan.vendorStops;
      if (request.temperature !== null) body.temperature = request.temperature;
      if (request.topP !== null) body.top_p = request.topP;
      if (request.user !== null) body.metadata = { user_id: request.user };
      if (request.stream) body.stream = true;
      return body;
    },
    extractError: extractAnthropicError,
    responseParts: anthropicMessageParts,
    streamParts: anthropicStreamParts,
  });
}
