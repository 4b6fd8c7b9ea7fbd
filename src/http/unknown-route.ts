/**
 * Requests no route serves: 404 `route_not_found` for a path the gateway does not have, whatever
 * the method and content type; 405 `method_not_allowed` with an `allow` header for a path it has,
 * asked with another method.
 */
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { GatewayError } from '../errors/gateway-error.js';
import { sendError } from './error-reply.js';

/** Collects the app's fixed paths as routes are added, then answers 404 or 405 for the rest. */
export class UnknownRoutes {
  private readonly methodsByPath = new Map<string, Set<string>>();

  /** An onRoute hook: remembers the methods of each fixed path. */
  remember(route: RouteOptions): void {
    // Paths with parameters or wildcards answer 404 for other methods: only fixed paths are known exactly.
    if (route.url.includes(':') || route.url.includes('*')) return;
    const methods = this.methodsByPath.get(route.url) ?? new Set<string>();
    for (const method of [route.method].flat()) methods.add(method.toUpperCase());
    this.methodsByPath.set(route.url, methods);
  }

  /** The not-found handler. */
  answer(request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const path = request.url.split('?')[0];
    const methods = this.methodsByPath.get(path);
    if (methods === undefined) {
      return sendError(
        new GatewayError(`No route for ${request.method} ${path}.`, { status: 404, type: 'not_found_error', code: 'route_not_found' }),
        request,
        reply,
      );
    }
    const allow = [...methods].sort().join(', ');
    const error = new GatewayError(`${path} does not accept ${request.method}; it accepts ${allow}.`, {
      status: 405,
      type: 'invalid_request_error',
      code: 'method_not_allowed',
      headers: { allow },
    });
    return sendError(error, request, reply);
  }
}
