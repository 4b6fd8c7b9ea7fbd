/**
 * CORS, off unless TOLLGATE_CORS_ORIGINS (or `corsOrigins` in the config file) lists origins.
 * Only listed origins (or `*`) get allow headers; preflights are answered here with 204.
 */
import type { FastifyInstance } from 'fastify';

const allowedHeaders = 'authorization, content-type, x-api-key, x-selected-account-id, x-request-id';
const exposedHeaders = 'x-request-id, x-tollgate-emulated, retry-after, x-ratelimit-limit-requests, x-ratelimit-remaining-requests, x-ratelimit-reset-requests, x-ratelimit-limit-tokens, x-ratelimit-remaining-tokens, x-ratelimit-reset-tokens';

export function registerCors(app: FastifyInstance, origins: readonly string[]): void {
  if (origins.length === 0) return;
  const any = origins.includes('*');
  const allowed = new Set(origins);
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (typeof origin !== 'string' || (!any && !allowed.has(origin))) return;
    reply.header('access-control-allow-origin', any ? '*' : origin);
    if (!any) reply.header('vary', 'origin');
    reply.header('access-control-expose-headers', exposedHeaders);
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method']) {
      reply.header('access-control-allow-methods', 'GET, POST, PUT, OPTIONS');
      reply.header('access-control-allow-headers', allowedHeaders);
      reply.header('access-control-max-age', '600');
      return reply.status(204).send();
    }
  });
}
