/**
 * The one ledger record per authenticated request, with its log line (never prompts or keys) and
 * metrics: for runs (success, failure, cancel) and for requests refused before they became one.
 * Counts what is in flight, so shutdown can wait for every record.
 */
import type { Caller } from '../auth/authenticate.js';
import { toErrorResponse } from '../errors/error-mapper.js';
import { serviceUnavailable } from '../errors/gateway-error.js';
import { VendorError } from '../errors/vendor-error.js';
import type { Logger, RequestLogIds } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { UsageOutcome, UsageRecord } from '../storage/types.js';
import type { Ledger } from '../usage/ledger.js';
import type { MeteredUsage } from './usage-meter.js';

/** How a request ended. */
export type RunEnd = { kind: 'success' } | { kind: 'cancelled' } | { kind: 'failed'; error: unknown };

export interface RunEntry {
  ids: RequestLogIds;
  caller: Caller;
  /** As the caller wrote it (kept to its first 200 characters). */
  model: string;
  vendor: string | null;
  stream: boolean;
  usage: MeteredUsage;
  end: RunEnd;
  /** performance.now() values. */
  startedAt: number;
  /** ms after `startedAt` of the first text delta. */
  firstTokenAt: number | null;
  generationStartedAt: number | null;
}

const ledgerUnavailable = (cause: unknown) =>
  serviceUnavailable('The usage ledger is unavailable, so the gateway cannot report this completion as metered. Retry later.', 'ledger_unavailable', cause);

export class RunRecorder {
  private inFlight = 0;
  private drained: (() => void) | null = null;

  constructor(
    private readonly ledger: Ledger,
    private readonly logger: Logger,
    private readonly metrics: Metrics,
  ) {}

  /** A request that will be recorded (`record` must follow, once); streams count as open until then. */
  begin(stream: boolean): void {
    this.inFlight++;
    if (stream) this.metrics.inFlightStreams.inc();
  }

  /** Writes the record; a success whose record fails throws the 503 the client gets instead. */
  async record(entry: RunEntry): Promise<void> {
    const { outcome, status, code } = outcomeOf(entry.end);
    const usage = entry.usage;
    const record: UsageRecord = {
      requestId: entry.ids.completionId,
      accountId: entry.caller.account.id,
      keyId: entry.caller.keyId,
      model: entry.model.slice(0, 200),
      vendor: entry.vendor,
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      totalTokens: usage.promptTokens + usage.completionTokens,
      cachedTokens: usage.cachedTokens ?? null,
      reasoningTokens: usage.reasoningTokens ?? null,
      estimated: usage.estimated,
      costNanoUsd: usage.costNanoUsd,
      stream: entry.stream,
      outcome,
      status,
      errorCode: code,
      latencyMs: round(performance.now() - entry.startedAt),
      ttftMs: entry.firstTokenAt === null ? null : round(entry.firstTokenAt),
      createdAt: new Date(performance.timeOrigin + entry.startedAt).toISOString(),
    };
    const overhead = entry.generationStartedAt === null ? null : (entry.generationStartedAt - entry.startedAt) / 1000;
    try {
      await this.ledger.record(record, entry.ids);
      this.finished(record, entry.ids.requestId, overhead);
    } catch (error) {
      this.finished({ ...record, status: entry.end.kind === 'success' ? 503 : status }, entry.ids.requestId, overhead);
      if (entry.end.kind === 'success') throw ledgerUnavailable(error);
      throw error;
    } finally {
      this.inFlight--;
      if (this.inFlight === 0) this.drained?.();
    }
  }

  /** The request's log line and metrics, from its record (already cut to the ledger's bounds). */
  private finished(record: UsageRecord, requestId: string, overheadSeconds: number | null): void {
    const { metrics } = this;
    const stream = record.stream;
    if (stream) metrics.inFlightStreams.dec();
    const vendor = record.vendor ?? 'none';
    const modelLabel = metrics.modelLabel(record.model);
    metrics.requests.labels(vendor, modelLabel, String(record.status)).inc();
    metrics.latency.labels(vendor, String(stream)).observe(record.latencyMs / 1000);
    if (record.ttftMs !== null) metrics.timeToFirstByte.labels(vendor).observe(record.ttftMs / 1000);
    if (overheadSeconds !== null) metrics.gatewayOverhead.observe(overheadSeconds);
    metrics.tokens.labels(record.accountId, modelLabel, 'prompt').inc(record.promptTokens);
    metrics.tokens.labels(record.accountId, modelLabel, 'completion').inc(record.completionTokens);
    if (record.costNanoUsd) metrics.cost.labels(record.accountId, modelLabel).inc(record.costNanoUsd / 1e9);
    this.logger.info(
      {
        requestId,
        completionId: record.requestId,
        account: record.accountId,
        keyId: record.keyId,
        model: record.model,
        vendor,
        stream,
        status: record.status,
        promptTokens: record.promptTokens,
        completionTokens: record.completionTokens,
        costNanoUsd: record.costNanoUsd,
        estimated: record.estimated,
        latencyMs: Math.round(record.latencyMs * 10) / 10,
        ttftMs: record.ttftMs === null ? null : Math.round(record.ttftMs * 10) / 10,
      },
      'completion',
    );
  }

  /** Resolves when every begun request is recorded, or after `timeoutMs`. */
  async drain(timeoutMs: number): Promise<void> {
    if (this.inFlight === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      timer.unref();
      this.drained = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

/** The ledger outcome of how a request ended, with the status and code the client is answered with. */
function outcomeOf(end: RunEnd): { outcome: UsageOutcome; status: number; code: string | null } {
  if (end.kind === 'success') return { outcome: 'success', status: 200, code: null };
  if (end.kind === 'cancelled') return { outcome: 'cancelled', status: 499, code: 'client_cancelled' };
  const { status, body } = toErrorResponse(end.error);
  const outcome: UsageOutcome =
    end.error instanceof VendorError ? 'vendor_error' : status === 429 ? 'rate_limited' : status < 500 ? 'invalid_request' : 'error';
  return { outcome, status, code: body.error.code };
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
