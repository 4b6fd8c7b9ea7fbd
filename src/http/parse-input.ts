/** Reads a request's query or JSON body through a zod schema; the first issue becomes a 400 naming its parameter. */
import type { z } from 'zod';
import { invalidRequest } from '../errors/gateway-error.js';

/**
 * The parsed input, or a 400: `Unknown query parameter 'x'.` or `Unrecognized argument 'x'.` for a
 * key the schema lacks; for any other issue `Invalid 'param': …`, or the schema's own message when
 * `ownMessages` (each of its messages names the parameter).
 */
export function parseInput<T>(schema: z.ZodType<T>, input: unknown, part: 'query' | 'body', ownMessages = false): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0];
    throw invalidRequest(part === 'query' ? `Unknown query parameter '${key}'.` : `Unrecognized argument '${key}'.`, key, 'unknown_parameter');
  }
  const param = issue.path.map(String).join('.') || null;
  throw invalidRequest(ownMessages ? issue.message : `Invalid '${param ?? part}': ${issue.message}`, param);
}
