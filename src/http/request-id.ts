/**
 * Request ids: fastify's `genReqId` names each request (the caller's own `x-request-id` when it
 * is a sane token), and the hook below returns it on every response, errors included.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';

const acceptable = /^[\x21-\x7e]{1,200}$/;

/** The caller's `x-request-id` when it is a sane token, else a new unguessable one. */
export function requestIdFor(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  if (typeof incoming === 'string' && acceptable.test(incoming)) return incoming;
  return `req_${randomUUID()}`;
}

/** An onRequest hook that sends the request's id back as `x-request-id`. */
export function requestIdHeader() {
  return function sendRequestId(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
    reply.header('x-request-id', request.id);
    done();
  };
}
