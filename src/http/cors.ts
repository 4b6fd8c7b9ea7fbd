/**
 * CORS, off unless TOLLGATE_CORS_ORIGINS (or `corsOrigins` in the config file) lists origins.
 * Only listed origins (or `*`) get allow headers; preflights are answered here with 204.
 */
import type { FastifyInstance } from 'fastify';

const allowedHeaders = 'authorization, content-type, x-api-key, x-selected-account-id, x-request-id';
const exposedHeaders = 'x-request-id, x-tollgate-emulated, retry-after, x-ratelimit-limit-requests, x-ratelimit-remaining-requests, x-ratelimit-reset-requests, x-ratelimit-limit-tokens, x-ratelimit-remaining-tokens, x-ratelimit-reset-tokens';

export interface CorsPolicy {
  /** Adds the response headers for a request from `origin` (none when CORS is off or the origin is not listed). */
  addHeaders(origin: string | string[] | undefined, headers: Record<string, string>): void;
}

export function corsPolicy(origins: readonly string[]): CorsPolicy {
  if (origins.length === 0) return { addHeaders() {} };
  const any = origins.includes('*');
  const allowed = new Set(origins);
  return {
    addHeaders(origin, headers) {
      if (typeof origin !== 'string' || (!any && !allowed.has(origin))) return;
      headers['access-control-allow-origin'] = any ? '*' : origin;
      if (!any) headers.vary = 'origin';
      headers['access-control-expose-headers'] = exposedHeaders;
    },
  };
}

export function registerCors(app: FastifyInstance, origins: readonly string[]): void {
  if (origins.length === 0) return;
  const policy = corsPolicy(origins);
  app.addHook('onRequest', async (request, reply) => {
    const headers: Record<string, string> = {};
    policy.addHeaders(request.headers.origin, headers);
    if (!headers['access-control-allow-origin']) return;
    reply.headers(headers);
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method']) {
      reply.header('access-control-allow-methods', 'GET, POST, PUT, OPTIONS');
      reply.header('access-control-allow-headers', allowedHeaders);
      reply.header('access-control-max-age', '600');
      return reply.status(204).send();
    }
  });
}
