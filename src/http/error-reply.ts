/** The HTTP error answer for every route: the one mapper's status, headers and body. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { toErrorResponse } from '../errors/error-mapper.js';
import { GatewayError } from '../errors/gateway-error.js';

/** Sends `error` in the OpenAI error shape; an unexpected server error is logged (its message never reaches the client). */
export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const mapped = toErrorResponse(error);
  if (mapped.status >= 500 && !(error instanceof GatewayError)) request.log.error({ err: error, requestId: request.id }, 'unhandled error');
  return reply.status(mapped.status).headers(mapped.headers).send(mapped.body);
}
