/**
 * API-key authentication for the /v5 routes: `x-api-key` or `Authorization: Bearer`, with the
 * optional `x-selected-account-id`. The resolved caller is the request's `caller` decoration.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { Authenticator, Caller } from '../auth/authenticate.js';
import { GatewayError } from '../errors/gateway-error.js';
import './fastify-types.js';

/** An onRequest hook that sets `request.caller` or answers 401/403. */
export function requireApiKey(authenticator: Authenticator) {
  // Callback style: a cached key is checked without a promise.
  return function authenticateApiKey(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
    let result: Caller | Promise<Caller>;
    try {
      result = authenticator.authenticate(request.headers);
    } catch (error) {
      done(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (result instanceof Promise) {
      result.then((caller) => {
        request.caller = caller;
        done();
      }, done);
      return;
    }
    request.caller = result;
    done();
  };
}

/** The caller `requireApiKey` resolved; a route outside its scope gets a 401 rather than a crash. */
export function callerOf(request: FastifyRequest): Caller {
  if (request.caller === null) throw new GatewayError('This route needs an API key.', { status: 401, type: 'authentication_error', code: 'invalid_api_key' });
  return request.caller;
}
