/**
 * Requests no route serves: 404 `route_not_found` for a path the gateway does not have, whatever
 * the method and content type; 405 `method_not_allowed` with an `allow` header for a path it has,
 * asked with another method.
 */
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { GatewayError } from '../errors/gateway-error.js';
import { sendError } from './error-reply.js';

/** What the app needs to answer requests no route serves. */
export interface UnknownRoutes {
  /** An onRoute hook: remembers the methods of each fixed path. */
  remember(route: RouteOptions): void;
  /** The not-found handler. */
  answer(request: FastifyRequest, reply: FastifyReply): FastifyReply;
}

/** Collects the app's fixed paths as routes are added, then answers 404 or 405 for the rest. */
export function unknownRoutes(): UnknownRoutes {
  const methodsByPath = new Map<string, Set<string>>();
  return {
    remember(route) {
      // Paths with parameters or wildcards answer 404 for other methods: only fixed paths are known exactly.
      if (route.url.includes(':') || route.url.includes('*')) return;
      const methods = methodsByPath.get(route.url) ?? new Set<string>();
      for (const method of [route.method].flat()) methods.add(method.toUpperCase());
      methodsByPath.set(route.url, methods);
    },
    answer(request, reply) {
      const path = request.url.split('?')[0];
      const methods = methodsByPath.get(path);
      if (methods === undefined) {
        return sendError(
          new GatewayError(`No route for ${request.method} ${path}.`, { status: 404, type: 'not_found_error', code: 'route_not_found' }),
          request,
          reply,
        );
      }
      const allow = [...methods].sort().join(', ');
      return sendError(
        new GatewayError(`${path} does not accept ${request.method}; it accepts ${allow}.`, {
          status: 405,
          type: 'invalid_request_error',
          code: 'method_not_allowed',
          headers: { allow },
        }),
        request,
        reply,
      );
    },
  };
}
