/** GET /openapi.json: an OpenAPI 3.1 document generated from the schemas that validate requests. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { chatRequestSchema } from '../completions/chat-request-schema.js';
import { completionRequestSchema } from '../completions/completion-request-schema.js';
import { completionChunkSchema, completionSchema, errorSchema } from '../completions/completion-response-schema.js';
import { usageQuerySchema } from './usage-route.js';
import { packageVersion } from '../config/package-version.js';

export function buildOpenApiDocument(version: string): Record<string, unknown> {
  const schema = (type: z.ZodType) => z.toJSONSchema(type, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' });
  const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } });
  const query = schema(usageQuerySchema) as { properties: Record<string, unknown> };
  /** POST /v5/completions and /v5/chat/completions: the same headers and errors, each its own body and answer. */
  const inference = (summary: string, request: string, answer: string, content: Record<string, unknown>) => ({
    summary,
    parameters: [
      { name: 'x-selected-account-id', in: 'header', required: false, schema: { type: 'string' } },
      {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description:
          'A repeat with the same body within 24 h, for the same account, gets the first answer back byte for byte with `idempotent-replayed: true`, and is not billed again.',
        schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' },
      },
    ],
    requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${request}` } } } },
    responses: {
      200: { description: answer, content },
      400: errorResponse('Invalid request; `param` names the field (invalid_idempotency_key: a bad Idempotency-Key).'),
      401: errorResponse('Missing or invalid API key.'),
      403: errorResponse('x-selected-account-id does not match the key, or a USD budget applies and the model has no price (model_not_priced).'),
      409: errorResponse('A request with the same Idempotency-Key is still running (idempotency_key_in_use).'),
      404: errorResponse('Unknown vendor or model (model_not_found).'),
      413: errorResponse('Body too large.'),
      415: errorResponse('Not application/json.'),
      422: errorResponse('The Idempotency-Key was used with another body (idempotency_key_reused).'),
      429: errorResponse('Rate limit (rate_limit_exceeded) or budget (insufficient_quota).'),
      502: errorResponse('The vendor failed.'),
      503: errorResponse('Storage or rate-limit state unavailable.'),
      504: errorResponse('The vendor timed out.'),
    },
  });
  return {
    openapi: '3.1.0',
    info: { title: 'Tollgate', version, description: 'An LLM gateway for the legacy text-completions and the chat-completions APIs.' },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        bearer: { type: 'http', scheme: 'bearer' },
      },
      schemas: {
        CompletionRequest: schema(completionRequestSchema),
        ChatCompletionRequest: schema(chatRequestSchema),
        Completion: schema(completionSchema),
        CompletionChunk: schema(completionChunkSchema),
        Error: schema(errorSchema),
      },
    },
    security: [{ apiKey: [] }, { bearer: [] }],
    paths: {
      '/v5/completions': {
        post: inference(
          'Generate a legacy text completion from a prompt',
          'CompletionRequest',
          'A text_completion object, or server-sent events of CompletionChunk when `stream` is true (ending `event: done` then `data: [DONE]`).',
          {
            'application/json': { schema: { $ref: '#/components/schemas/Completion' } },
            'text/event-stream': { schema: { $ref: '#/components/schemas/CompletionChunk' } },
          },
        ),
      },
      '/v5/chat/completions': {
        post: inference(
          'Answer a conversation: OpenAI chat completions, text only',
          'ChatCompletionRequest',
          'A chat.completion object, or server-sent events of chat.completion.chunk when `stream` is true (ending `event: done` then `data: [DONE]`).',
          { 'application/json': {}, 'text/event-stream': {} },
        ),
      },
      '/v5/chat/completions/models': {
        get: {
          summary: 'Models that answer conversations',
          responses: {
            200: { description: 'OpenAI list (data) and SGP list (items, model_type chat_completion), paged by limit, starting_after and ending_before.' },
            400: errorResponse('A cursor that names no model of the list, or a bad limit.'),
          },
        },
      },
      '/v5/models': {
        get: {
          summary: 'Models the caller can use',
          responses: {
            200: { description: 'OpenAI list (data) and SGP list (items) of the same models, paged by limit, starting_after and ending_before.' },
            400: errorResponse('A cursor that names no model of the list, or a bad limit.'),
          },
        },
      },
      '/v5/usage': {
        get: {
          summary: "The caller's account usage",
          parameters: Object.entries(query.properties).map(([name, property]) => ({ name, in: 'query', required: false, schema: property })),
          responses: {
            200: { description: 'Requests, tokens, cost_usd and unpriced_requests: totals and groups (JSON) or CSV.' },
            400: errorResponse('Invalid query.'),
          },
        },
      },
      '/health': { get: { summary: 'Liveness', security: [], responses: { 200: { description: 'ok' } } } },
      '/ready': {
        get: {
          summary: 'Storage reachable and vendors configured',
          security: [],
          responses: { 200: { description: 'ready' }, 503: { description: 'storage unreachable' } },
        },
      },
      '/metrics': { get: { summary: 'Prometheus metrics', security: [], responses: { 200: { description: 'text exposition format' } } } },
    },
  };
}

export function registerOpenApiRoute(app: FastifyInstance): void {
  let document: string | null = null;
  app.get('/openapi.json', async (_request, reply) => {
    document ??= JSON.stringify(buildOpenApiDocument(packageVersion()));
    return reply.type('application/json; charset=utf-8').send(document);
  });
}
