/**
 * Answers what Node's HTTP parser rejects before fastify sees a request (oversized headers, a
 * malformed request line, headers that never finish) in the one error shape, then drops the socket.
 */
import type { Socket } from 'node:net';
import type { ErrorBody } from '../errors/error-mapper.js';

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
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nx-should-retry: ${retry}\r\nConnection: close\r\n\r\n${text}`,
    );
  }
  socket.destroy();
}
