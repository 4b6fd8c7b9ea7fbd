/** One log line and the metrics per completion request, from its ledger record. Never logs prompts or keys. */
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { UsageRecord } from '../storage/types.js';

export interface RequestObserver {
  /** A request was admitted (or refused) and will be recorded; streams count as open until then. */
  started(stream: boolean): void;
  /** The request's record (already cut to the ledger's bounds) and what only the log line carries. */
  finished(record: UsageRecord, requestId: string, stream: boolean, overheadSeconds: number | null): void;
}

export function createRequestObserver(logger: Logger, metrics: Metrics): RequestObserver {
  return {
    started(stream) {
      if (stream) metrics.inFlightStreams.inc();
    },
    finished(record, requestId, stream, overheadSeconds) {
      if (stream) metrics.inFlightStreams.dec();
      const vendor = record.vendor ?? 'none';
      const modelLabel = metrics.modelLabel(record.model);
      metrics.requests.labels(vendor, modelLabel, String(record.status)).inc();
      metrics.latency.labels(vendor, String(stream)).observe(record.latencyMs / 1000);
      if (record.ttftMs !== null) metrics.timeToFirstByte.labels(vendor).observe(record.ttftMs / 1000);
      if (overheadSeconds !== null) metrics.gatewayOverhead.observe(overheadSeconds);
      metrics.tokens.labels(record.accountId, modelLabel, 'prompt').inc(record.promptTokens);
      metrics.tokens.labels(record.accountId, modelLabel, 'completion').inc(record.completionTokens);
      logger.info(
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
          estimated: record.estimated,
          latencyMs: tenths(record.latencyMs),
          ttftMs: record.ttftMs === null ? null : tenths(record.ttftMs),
        },
        'completion',
      );
    },
  };
}

/** Milliseconds to one decimal. */
function tenths(ms: number): number {
  return Math.round(ms * 10) / 10;
}
