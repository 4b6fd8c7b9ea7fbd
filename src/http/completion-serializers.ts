/**
 * The completion and its stream chunks are written by fast-json-stringify, fastify's own
 * serializer, compiled from the schemas that document them (completion-response-schema.ts). It
 * writes the same JSON value as `JSON.stringify` (test/completion-serializers.test.ts holds it to
 * that) at about a third of the cost for these shapes (docs/performance.md).
 */
import fastJson from 'fast-json-stringify';
import { z } from 'zod';
import type { Completion } from '../completions/completion-objects.js';
import { completionChunkSchema, completionSchema } from '../completions/completion-response-schema.js';

function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _draft, ...rest } = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' });
  return rest;
}

/** The non-stream answer's schema, given to the route as its 200 response (fastify compiles it with fast-json-stringify). */
export const completionResponseSchema = jsonSchema(completionSchema);

/** One stream chunk as JSON. */
export const serializeChunk: (chunk: Completion) => string = fastJson(jsonSchema(completionChunkSchema));
