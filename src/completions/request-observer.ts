/** One log line and the metrics per completion request. Never logs prompts or keys. */
import type { CompletionRun } from './completion-pipeline.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';

/**
 * The most characters of a client-chosen string (the model name) a log line carries: the same
 * first 200 the ledger keeps, so a 100 KB model name never becomes a 100 KB log line.
 */
export const LOGGED_TEXT_LIMIT = 200;

export interface RequestObserver {
  started(run: CompletionRun): void;
  finished(run: CompletionRun, status: number): void;
}

export function createRequestObserver(logger: Logger, metrics: Metrics): RequestObserver {
  // A flag on the run, not a WeakSet of runs: collections keyed by the request kept whole
  // requests alive through young-generation GCs.
  return {
    started(run) {
      if (run.parsed?.stream) {
        run.countedAsStream = true;
        metrics.inFlightStreams.inc();
      }
    },
    finished(run, status) {
      if (run.countedAsStream) {
        run.countedAsStream = false;
        metrics.inFlightStreams.dec();
      }
      const vendor = run.target?.resolved.adapter.name ?? 'none';
      const model = run.parsed?.model ?? 'unknown';
      const modelLabel = metrics.modelLabel(model);
      const seconds = (performance.now() - run.startedAt) / 1000;
      const stream = run.parsed?.stream ?? false;
      metrics.requests.labels(vendor, modelLabel, String(status)).inc();
      metrics.latency.labels(vendor, stream ? 'true' : 'false').observe(seconds);
      if (run.meter.firstTokenAt !== null) metrics.timeToFirstByte.labels(vendor).observe(run.meter.firstTokenAt / 1000);
      if (run.generationStartedAt !== null) metrics.gatewayOverhead.observe((run.generationStartedAt - run.startedAt) / 1000);
      const usage = run.settledUsage;
      if (usage) {
        metrics.tokens.labels(run.caller.account.id, modelLabel, 'prompt').inc(usage.promptTokens);
        metrics.tokens.labels(run.caller.account.id, modelLabel, 'completion').inc(usage.completionTokens);
      }
      logger.info({
        requestId: run.requestId,
        completionId: run.completionId,
        account: run.caller.account.id,
        keyId: run.caller.keyId,
        model: model.length > LOGGED_TEXT_LIMIT ? model.slice(0, LOGGED_TEXT_LIMIT) : model,
        vendor,
        stream,
        status,
        promptTokens: usage?.promptTokens ?? 0,
        completionTokens: usage?.completionTokens ?? 0,
        estimated: usage?.estimated ?? false,
        latencyMs: tenths(seconds * 1000),
        ttftMs: run.meter.firstTokenAt === null ? null : tenths(run.meter.firstTokenAt),
      }, 'completion');
    },
  };
}

/** Milliseconds to one decimal. */
function tenths(ms: number): number {
  return Math.round(ms * 10) / 10;
}
