/**
 * `anthropic/*` → Messages API `POST {base}/v1/messages` (anthropic-version 2023-06-01, x-api-key).
 * Every call is one prompt, one choice; the shared single-choice adapter fans out prompts and n,
 * enforces the stops Anthropic cannot take and prepends echo.
 */
import type { Config } from '../../config/config.js';
import { tryParseJson } from '../shared/parse-upstream-json.js';
import { createSingleChoiceAdapter } from '../shared/single-choice-adapter.js';
import type { ExtractedError } from '../shared/upstream-client.js';
import type { VendorAdapter } from '../types.js';
import { anthropicErrorBodySchema, anthropicErrorStatus } from './anthropic-api.js';
import { anthropicBody } from './anthropic-body.js';
import { anthropicModels } from './anthropic-models.js';
import { planAnthropic } from './anthropic-plan.js';
import { anthropicMessageParts, anthropicStreamParts } from './parse-anthropic-response.js';

const vendor = 'anthropic';
const anthropicVersion = '2023-06-01';

/** The adapter, or the message saying which variable enables it (ANTHROPIC_API_KEY). */
export function createAnthropicAdapter(config: Config): VendorAdapter | string {
  return createSingleChoiceAdapter(config, {
    vendor,
    envPrefix: 'ANTHROPIC',
    defaultBaseUrl: 'https://api.anthropic.com',
    models: anthropicModels,
    extractError: extractAnthropicError,
    plan: planAnthropic,
    async *call({ request, model, plan, group, client, baseUrl, apiKey, requestId, signal }) {
      const url = new URL(`${baseUrl}/v1/messages`);
      const headers = { 'x-api-key': apiKey, 'anthropic-version': anthropicVersion, 'x-request-id': requestId };
      const body = JSON.stringify(anthropicBody(request, plan, group));
      const response = await client.open({ url, headers, body, streaming: request.stream, signal, model: model.name });
      if (!request.stream) {
        yield anthropicMessageParts(vendor, await client.readText(response, signal));
        return;
      }
      yield* anthropicStreamParts(vendor, client.chunks(response, signal), (status, message) => client.failure(status, message, model.name));
    },
  });
}

function extractAnthropicError(text: string): ExtractedError {
  const body = tryParseJson(anthropicErrorBodySchema, text);
  const type = body?.error?.type ?? '';
  // A 529 overloaded_error is a 5xx like any other; the type only matters when the status is odd.
  return { message: body?.error?.message ?? null, ...(type === 'overloaded_error' ? { status: anthropicErrorStatus[type] } : {}) };
}
