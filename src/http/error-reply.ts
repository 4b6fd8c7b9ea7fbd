/** The HTTP error answers, in the OpenAI error shape: the one mapper's for every route, and the raw ones for what Node's parser rejects. */
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { toErrorResponse, type ErrorBody } from '../errors/error-mapper.js';
import { GatewayError } from '../errors/gateway-error.js';

/** Sends `error` in the OpenAI error shape; an unexpected server error is logged (its message never reaches the client). */
export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const mapped = toErrorResponse(error);
  if (mapped.status >= 500 && !(error instanceof GatewayError)) request.log.error({ err: error, requestId: request.id }, 'unhandled error');
  return reply.status(mapped.status).headers(mapped.headers).send(mapped.body);
}

/**
 * fastify's `clientErrorHandler`: answers what Node's HTTP parser rejects before fastify sees a
 * request (oversized headers, a malformed request line, headers that never finish), then drops the socket.
 * The answer carries a new `x-request-id` like every other response (the caller's cannot be read).
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, reason, message, code] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'Request Timeout', 'The request headers did not arrive in time.', 'request_timeout']
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large', 'The request headers are larger than the gateway accepts.', 'headers_too_large']
        : [400, 'Bad Request', 'The request is not valid HTTP.', 'bad_request'];
  const body: ErrorBody = { error: { message, type: 'invalid_request_error', param: null, code } };
  const text = JSON.stringify(body);
  if (socket.writable) {
    const retry = status === 408 ? 'true' : 'false';
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nx-request-id: req_${randomUUID()}\r\nx-should-retry: ${retry}\r\nConnection: close\r\n\r\n${text}`,
    );
  }
  socket.destroy();
}
