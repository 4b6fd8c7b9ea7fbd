/**
 * `Idempotency-Key` at the HTTP edge, for any inference route: the route names itself, and the
 * rules (usage/idempotency-keys.ts) do the rest. A request without the header costs one header
 * lookup. A replay goes out as it was first sent, with `idempotent-replayed: true`, and is neither
 * admitted, sent upstream nor recorded in the ledger again.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/gateway-error.js';
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
   * release, or the stored answer to replay. Throws the 400, 409, 422 or 503 that refuses it, and
   * the gateway's own reason when it gives up on the request (shutdown) while the claim is pending.
   */
  async begin(request: FastifyRequest, route: string, signal: AbortSignal): Promise<IdempotencyClaim | Replay | null> {
    const key = parseIdempotencyKey(request.headers['idempotency-key']);
    if (key === null) return null;
    return unlessGivenUp(this.keys.claim({ accountId: callerOf(request).account.id, route, key }, request.body), signal);
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

/**
 * The claim, unless the gateway gives up on the request first (its signal aborted with a
 * GatewayError, as at the shutdown deadline): then that error at once, so the client is answered
 * before its connection is cut, and the claim is released when it comes back. A client that leaves
 * waits for the claim: its run is then cancelled and recorded as such.
 */
function unlessGivenUp(claiming: Promise<IdempotencyClaim | Replay>, signal: AbortSignal): Promise<IdempotencyClaim | Replay> {
  return new Promise((resolve, reject) => {
    const giveUp = () => {
      if (!(signal.reason instanceof GatewayError)) return;
      reject(signal.reason);
      claiming.then((late) => (late.kind === 'claimed' ? late.release() : undefined)).catch(() => undefined);
    };
    signal.addEventListener('abort', giveUp, { once: true });
    claiming.then(resolve, reject).finally(() => signal.removeEventListener('abort', giveUp));
    if (signal.aborted) giveUp();
  });
}

/** The headers of an answer that its replay repeats (content type, what the gateway emulated, …). */
export function replayedHeaders(headers: Record<string, string | number | string[] | undefined>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !perExchange.test(name.toLowerCase())) kept[name.toLowerCase()] = String(value);
  }
  return kept;
}
