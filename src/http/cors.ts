/**
 * CORS, off unless TOLLGATE_CORS_ORIGINS (or `corsOrigins` in the config file) lists origins.
 * Only listed origins (or `*`) get allow headers; preflights are answered here with 204.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

/** What a page may send: the headers the OpenAI and SGP SDKs add in a browser, besides any `x-stainless-*`. */
const allowedHeaders = [
  'authorization',
  'content-type',
  'x-api-key',
  'x-selected-account-id',
  'x-request-id',
  'idempotency-key',
  'openai-organization',
  'openai-project',
  'openai-beta',
];
/** What a page may read from a response. */
const exposedHeaders = [
  'x-request-id',
  'x-tollgate-emulated',
  'idempotent-replayed',
  'retry-after',
  'x-should-retry',
  'x-ratelimit-limit-requests',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-reset-requests',
  'x-ratelimit-limit-tokens',
  'x-ratelimit-remaining-tokens',
  'x-ratelimit-reset-tokens',
].join(', ');

/**
 * An onRequest hook adding CORS headers for the origins allowed to call the gateway from a page
 * (`*` allows any) and answering their preflights, or null when none are (CORS is off).
 */
export function cors(origins: readonly string[]) {
  if (origins.length === 0) return null;
  const any = origins.includes('*');
  const allowed = new Set(origins);
  return async function applyCors(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const origin = request.headers.origin;
    if (typeof origin !== 'string' || (!any && !allowed.has(origin))) return undefined;
    reply.header('access-control-allow-origin', any ? '*' : origin);
    if (!any) reply.header('vary', 'origin');
    reply.header('access-control-expose-headers', exposedHeaders);
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method']) {
      reply.header('access-control-allow-methods', 'GET, POST, PUT, OPTIONS');
      reply.header('access-control-allow-headers', allowedHeadersFor(request.headers['access-control-request-headers']));
      reply.header('access-control-max-age', '600');
      return reply.status(204).send();
    }
    return undefined;
  };
}

/** The fixed list, plus each `x-stainless-*` header the page asked for (the SDKs add new ones over time). */
function allowedHeadersFor(requested: string | undefined): string {
  const names = new Set(allowedHeaders);
  for (const name of (requested ?? '').split(',')) {
    const trimmed = name.trim().toLowerCase();
    if (/^x-stainless-[a-z0-9-]{1,64}$/.test(trimmed)) names.add(trimmed);
  }
  return [...names].join(', ');
}
