/**
 * The hot route's own front door. `POST /v5/completions` with a JSON body goes from Node's HTTP
 * server straight to the completions handler: request id, CORS headers, the API key, the body
 * (read as fastify would read it), then the pipeline, without fastify's request and reply
 * objects, hook runners, router and serializer on every call. Anything else — other routes,
 * other content types, a server that is closing (fastify answers 503) — goes to fastify.
 */
import { createServer, type IncomingMessage, type ServerOptions, type ServerResponse } from 'node:http';
import type { FastifyServerFactory } from 'fastify';
import type { Authenticator, Caller } from '../auth/authenticate.js';
import type { CorsPolicy } from './cors.js';
import type { CompletionContext, CompletionsHandler } from './completions-route.js';
import { writeError } from './completions-route.js';
import { readJsonBody } from './read-json-body.js';
import { requestIdFor } from './request-id.js';

export interface CompletionsEdgeOptions {
  handler: CompletionsHandler;
  authenticator: Authenticator;
  cors: CorsPolicy;
  bodyLimitBytes: number;
}

export interface CompletionsEdge {
  /** Whether the edge serves this request (otherwise fastify does). */
  takes(request: IncomingMessage): boolean;
  handle(request: IncomingMessage, response: ServerResponse): void;
  /** From now on every request goes to fastify (which refuses new work while it closes). */
  close(): void;
}

const path = '/v5/completions';

export function createCompletionsEdge(options: CompletionsEdgeOptions): CompletionsEdge {
  const { handler, authenticator, cors, bodyLimitBytes } = options;
  let closing = false;

  const afterAuth = (request: IncomingMessage, response: ServerResponse, context: CompletionContext) => {
    readJsonBody(request, bodyLimitBytes, (error, body) => {
      if (error) {
        // As fastify does: the client may still be sending, so this connection is not reused.
        context.headers.connection = 'close';
        void handler.refuse(response, context, error);
        return;
      }
      void handler.serve(response, context, body);
    });
  };

  return {
    takes(request) {
      if (closing || request.method !== 'POST') return false;
      const url = request.url;
      if (url !== path && !(url !== undefined && url.startsWith(path) && url.charCodeAt(path.length) === 63 /* ? */)) return false;
      return isJson(request.headers['content-type']);
    },

    handle(request, response) {
      const requestId = requestIdFor(request);
      const headers: Record<string, string> = { 'x-request-id': requestId };
      cors.addHeaders(request.headers.origin, headers);
      let caller: Caller | Promise<Caller>;
      try {
        caller = authenticator.authenticate(request.headers);
      } catch (error) {
        writeError(response, headers, error);
        return;
      }
      if (caller instanceof Promise) {
        caller.then(
          (resolved) => afterAuth(request, response, { requestId, caller: resolved, headers }),
          (error: unknown) => writeError(response, headers, error),
        );
        return;
      }
      afterAuth(request, response, { requestId, caller, headers });
    },

    close() {
      closing = true;
    },
  };
}

/** `application/json`, with or without parameters (`; charset=utf-8`), as fastify's JSON parser matches it. */
function isJson(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  if (contentType === 'application/json') return true;
  const semicolon = contentType.indexOf(';');
  const type = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  return type === 'application/json';
}

/** The HTTP server fastify would build for itself (same options), with the edge in front of fastify's handler. */
export function edgeServerFactory(edge: CompletionsEdge): FastifyServerFactory {
  const factory = (fastifyHandler: (request: IncomingMessage, response: ServerResponse) => void, options: { http?: ServerOptions; keepAliveTimeout: number; requestTimeout: number; connectionTimeout: number }) => {
    const server = createServer(options.http ?? {}, (request, response) => {
      if (edge.takes(request)) edge.handle(request, response);
      else fastifyHandler(request, response);
    });
    server.keepAliveTimeout = options.keepAliveTimeout;
    server.requestTimeout = options.requestTimeout;
    server.setTimeout(options.connectionTimeout);
    return server;
  };
  return factory as unknown as FastifyServerFactory;
}
