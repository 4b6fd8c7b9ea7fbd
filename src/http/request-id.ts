import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const acceptable = /^[\x21-\x7e]{1,200}$/;

/** The caller's `x-request-id` when it is a sane token, else a new unguessable one. */
export function requestIdFor(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  if (typeof incoming === 'string' && acceptable.test(incoming)) return incoming;
  return `req_${randomUUID()}`;
}
