/**
 * Malformed URLs get a 400 in the error shape. fastify's router refuses a bad percent-escape in
 * the path (FST_ERR_BAD_URL, answered through `frameworkErrors`); its query parser is lenient,
 * so the hook below refuses a bad escape in the query.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { malformedUrl } from '../errors/gateway-error.js';

/** An onRequest hook refusing a query string that does not percent-decode. */
export function rejectMalformedQuery() {
  return function checkQuery(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
    const url = request.url;
    const start = url.indexOf('?');
    if (start === -1 || !url.includes('%', start)) {
      done();
      return;
    }
    try {
      decodeURIComponent(url.slice(start + 1));
    } catch {
      done(malformedUrl());
      return;
    }
    done();
  };
}
