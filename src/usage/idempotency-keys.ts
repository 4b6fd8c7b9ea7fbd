/**
 * The `Idempotency-Key` rules for every inference route: a key is claimed, per account and route,
 * before the request runs; a success stores its response for 24 h and a repeat with the same body
 * gets it back instead of running (and being billed) again; any failure releases the key.
 *
 * A running claim holds a short lease that its holder renews while the request runs, so a claim
 * left by a crashed process stops blocking its key within one lease, however long requests run.
 * Expired entries count as absent and are purged in small batches as keys are claimed.
 */
import { randomBytes } from 'node:crypto';
import { idempotencyErrors } from '../errors/gateway-error.js';
import type { Logger } from '../observability/logger.js';
import type { IdempotencyEntry, IdempotencyHolder, IdempotencyScope, Storage, StoredResponse } from '../storage/types.js';
import { requestFingerprint } from './request-fingerprint.js';

export interface IdempotencyOptions {
  /** How long a stored response is replayed, ms (default 24 h). */
  responseTtlMs?: number;
  /** A running claim's lease, ms (default 2 min); its holder renews it every quarter of that. */
  claimLeaseMs?: number;
  /** Most expired entries one purge deletes (default 500). */
  purgeBatch?: number;
  /** Least time between purges while the last one left nothing behind, ms (default 60 s). */
  purgeIntervalMs?: number;
}

/** A stored response for the caller to send as it is. */
export interface Replay {
  kind: 'replay';
  /** The id of the completion the response is from. */
  completionId: string | null;
  response: StoredResponse;
}

/** 1 to 255 printable ASCII characters, space included. */
const validKey = /^[\x20-\x7e]{1,255}$/;

/** The key a request sent, or null when it sent none; a 400 when it is not 1–255 printable ASCII characters. */
export function parseIdempotencyKey(header: string | string[] | undefined): string | null {
  if (header === undefined) return null;
  if (typeof header !== 'string' || !validKey.test(header)) throw idempotencyErrors.invalidKey();
  return header;
}

export class IdempotencyKeys {
  private readonly responseTtlMs: number;
  private readonly claimLeaseMs: number;
  private readonly purgeBatch: number;
  private readonly purgeIntervalMs: number;
  private lastPurgeAt = Number.NEGATIVE_INFINITY;
  private purging = false;
  /** The last purge deleted a whole batch: more may be waiting. */
  private purgeBacklog = false;

  constructor(
    private readonly storage: Storage,
    private readonly logger: Logger,
    options: IdempotencyOptions = {},
  ) {
    this.responseTtlMs = options.responseTtlMs ?? 24 * 3_600_000;
    this.claimLeaseMs = options.claimLeaseMs ?? 120_000;
    this.purgeBatch = options.purgeBatch ?? 500;
    this.purgeIntervalMs = options.purgeIntervalMs ?? 60_000;
  }

  /**
   * Claims `scope` for a request with this body, or finds the response to replay. Throws the 422
   * `idempotency_key_reused` for another body, the 409 `idempotency_key_in_use` while the first
   * request runs, and the storage's 503 when the claim cannot be written.
   */
  async claim(scope: IdempotencyScope, body: unknown): Promise<IdempotencyClaim | Replay> {
    const fingerprint = requestFingerprint(body);
    const holder: IdempotencyHolder = { ...scope, token: randomBytes(16).toString('hex') };
    const now = Date.now();
    const found = await this.storage.claimIdempotencyKey({ ...holder, fingerprint, now: iso(now), expiresAt: iso(now + this.claimLeaseMs) });
    this.purgeSoon(now);
    if (found === null) return new IdempotencyClaim(this.storage, this.logger, holder, { responseTtlMs: this.responseTtlMs, claimLeaseMs: this.claimLeaseMs });
    return replayOf(found, fingerprint);
  }

  /** One purge at a time: at most once per interval, or at once while a backlog remains. */
  private purgeSoon(now: number): void {
    if (this.purging || (!this.purgeBacklog && now - this.lastPurgeAt < this.purgeIntervalMs)) return;
    this.purging = true;
    this.lastPurgeAt = now;
    this.storage
      .purgeIdempotencyKeys({ now: iso(now), limit: this.purgeBatch })
      .then(
        (deleted) => {
          this.purgeBacklog = deleted >= this.purgeBatch;
        },
        (error: unknown) => this.logger.warn({ err: (error as Error).message }, 'idempotency key purge failed'),
      )
      .finally(() => {
        this.purging = false;
      });
  }
}

/** A key this process holds while its request runs: completed with the response, or released. */
export class IdempotencyClaim {
  readonly kind = 'claimed';
  private readonly renewal: NodeJS.Timeout;
  private settled = false;

  constructor(
    private readonly storage: Storage,
    private readonly logger: Logger,
    private readonly holder: IdempotencyHolder,
    private readonly timing: { responseTtlMs: number; claimLeaseMs: number },
  ) {
    this.renewal = setInterval(renewClaim, Math.max(1, Math.floor(timing.claimLeaseMs / 4)), this);
    this.renewal.unref();
  }

  /** Stores the response for replay. Never throws: a response that cannot be stored is logged, the key released, and the client still answered. */
  async complete(completionId: string, response: StoredResponse): Promise<void> {
    if (!this.finish()) return;
    const expiresAt = iso(Date.now() + this.timing.responseTtlMs);
    try {
      if (await this.storage.completeIdempotencyKey({ ...this.holder, completionId, response, expiresAt })) return;
      this.logger.error({ completionId, route: this.holder.route }, 'idempotency key lost before its response was stored');
    } catch (error) {
      this.logger.error({ completionId, route: this.holder.route, err: (error as Error).message }, 'idempotent response not stored');
      await this.storage.releaseIdempotencyKey(this.holder).catch(() => {});
    }
  }

  /** Frees the key so a retry runs again (the request failed or was cancelled). Never throws: an unreleased claim expires with its lease. */
  async release(): Promise<void> {
    if (!this.finish()) return;
    try {
      await this.storage.releaseIdempotencyKey(this.holder);
    } catch (error) {
      this.logger.warn({ route: this.holder.route, err: (error as Error).message }, 'idempotency key not released; it frees itself when its lease ends');
    }
  }

  /** Extends the lease while the request runs. */
  async renew(): Promise<void> {
    try {
      const expiresAt = iso(Date.now() + this.timing.claimLeaseMs);
      if (!this.settled && !(await this.storage.renewIdempotencyKey({ ...this.holder, expiresAt }))) {
        this.logger.warn({ route: this.holder.route }, 'idempotency key lost while its request ran');
        this.finish();
      }
    } catch (error) {
      this.logger.warn({ route: this.holder.route, err: (error as Error).message }, 'idempotency claim not renewed');
    }
  }

  /** True the first time: a claim is completed or released once. */
  private finish(): boolean {
    clearInterval(this.renewal);
    if (this.settled) return false;
    this.settled = true;
    return true;
  }
}

function renewClaim(claim: IdempotencyClaim): void {
  void claim.renew();
}

/** The live entry another request holds: its response when it matches this body, else why not. */
function replayOf(entry: IdempotencyEntry, fingerprint: string): Replay {
  if (entry.fingerprint !== fingerprint) throw idempotencyErrors.reused();
  if (entry.response === null) throw idempotencyErrors.inUse();
  return { kind: 'replay', completionId: entry.completionId, response: entry.response };
}

function iso(time: number): string {
  return new Date(time).toISOString();
}
