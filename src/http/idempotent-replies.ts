/**
 * `Idempotency-Key` at the HTTP edge, for any inference route: the route names itself, and the
 * rules (usage/idempotency-keys.ts) do the rest. A request without the header costs one header
 * lookup. A replay goes out as it was first sent, with `idempotent-replayed: true`, and is neither
 * admitted, sent upstream nor recorded in the ledger again.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../observability/logger.js';
import { type IdempotencyClaim, type IdempotencyKeys, parseIdempotencyKey, type Replay } from '../usage/idempotency-keys.js';
import { callerOf } from './api-key-auth.js';
import './fastify-types.js';

/** Headers that describe one exchange, not the answer: the replay gets its own (request id, rate limits, CORS, framing). */
const perExchange =
  /^(?:x-request-id|x-ratelimit-.*|access-control-.*|vary|retry-after|x-should-retry|content-length|transfer-encoding|connection|keep-alive|date)$/;

export class IdempotentReplies {
  constructor(
    private readonly keys: IdempotencyKeys,
    private readonly logger: Logger,
  ) {}

  /**
   * Null when the request carries no `Idempotency-Key`; else the claim its run must complete or
   * release, or the stored answer to replay. Throws the 400, 409, 422 or 503 that refuses it.
   */
  async begin(request: FastifyRequest, route: string): Promise<IdempotencyClaim | Replay | null> {
    const key = parseIdempotencyKey(request.headers['idempotency-key']);
    if (key === null) return null;
    return this.keys.claim({ accountId: callerOf(request).account.id, route, key }, request.body);
  }

  /** Sends the stored answer byte for byte, with the one log line of a replay. */
  replay(request: FastifyRequest, reply: FastifyReply, replay: Replay): FastifyReply {
    const { response, completionId } = replay;
    this.logger.info(
      { requestId: request.id, completionId, account: callerOf(request).account.id, route: request.routeOptions.url, status: response.status },
      'idempotent replay',
    );
    return reply.status(response.status).headers(response.headers).header('idempotent-replayed', 'true').send(response.body);
  }
}

/** The headers of an answer that its replay repeats (content type, what the gateway emulated, …). */
export function replayedHeaders(headers: Record<string, string | number | string[] | undefined>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !perExchange.test(name.toLowerCase())) kept[name.toLowerCase()] = String(value);
  }
  return kept;
}
