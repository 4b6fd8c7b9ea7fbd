/**
 * Prometheus metrics, one registry per app (so tests can build several apps), through
 * prom-client's own metric types. Label values come from our own data (vendor names, account ids,
 * statuses) or from the model catalogue: a model name the catalogue does not hold is counted as
 * `unknown`, so what a client types never becomes a time series.
 */
import { performance } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { createClusterMetricsWorker } from './cluster-metrics-worker.js';
import { listenToUpstream } from './upstream-events.js';

/** The `model` label of a request whose model is not in the catalogue. */
export const UNKNOWN_MODEL_LABEL = 'unknown';

export interface MetricsOptions {
  /** Model names (`vendor/name`, and aliases) that may become a `model` label; any other is counted as `unknown`. Default: none. */
  models?: Iterable<string>;
  /**
   * `process` (the default) answers a scrape from this process's registry; `cluster` (a
   * `serve --workers N` worker) asks the primary for every worker's metrics aggregated, and answers
   * the primary's collections from this registry.
   */
  scope?: 'process' | 'cluster';
}

export interface Metrics {
  /** What a scrape of `GET /metrics` answers: this process's metrics, or the whole cluster's. */
  scrape(): Promise<string>;
  /** The Prometheus text format's content type, for the scrape's response. */
  contentType: string;
  /** The `model` label for a requested model name: the name when the catalogue holds it, else `unknown`. */
  modelLabel(model: string): string;
  requests: Counter<'vendor' | 'model' | 'status'>;
  tokens: Counter<'account' | 'model' | 'kind'>;
  cost: Counter<'account' | 'model'>;
  latency: Histogram<'vendor' | 'stream'>;
  timeToFirstByte: Histogram<'vendor'>;
  inFlightStreams: Gauge;
  ledgerWrite: Histogram;
  gatewayOverhead: Histogram;
  /** Stop listening to upstream events (and, in a cluster worker, to the primary). */
  close(): void;
}

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry });
  const upstreamLatency = new Histogram({
    name: 'tollgate_upstream_latency_seconds',
    help: 'Upstream time to response headers, by vendor and status (or error code).',
    labelNames: ['vendor', 'outcome'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const upstreamErrors = new Counter({
    name: 'tollgate_upstream_errors_total',
    help: 'Upstream calls that failed, by vendor and status or error code.',
    labelNames: ['vendor', 'code'],
    registers,
  });
  const upstreamRetries = new Counter({
    name: 'tollgate_upstream_retries_total',
    help: 'Upstream calls retried, by vendor.',
    labelNames: ['vendor'],
    registers,
  });
  const stopListening = listenToUpstream({
    call(vendor, seconds, outcome) {
      upstreamLatency.labels(vendor, outcome).observe(seconds);
      if (outcome.length !== 3 || outcome[0] !== '2') upstreamErrors.labels(vendor, outcome).inc();
    },
    retry(vendor) {
      upstreamRetries.labels(vendor).inc();
    },
  });
  // The event loop's busy time as a counter: rate() over any window is its utilisation (0–1), the
  // saturation signal (near 1: requests queue behind one another), whoever scrapes and how often.
  new Counter({
    name: 'tollgate_event_loop_active_seconds_total',
    help: "Time this process's event loop spent running callbacks rather than waiting for I/O; its rate is the loop's utilisation (0-1).",
    registers,
    collect() {
      const activeSeconds = performance.eventLoopUtilization().active / 1000;
      this.reset();
      this.inc(activeSeconds);
    },
  });
  const models = new Set(options.models ?? []);
  const cluster = options.scope === 'cluster' ? createClusterMetricsWorker(registry) : null;
  return {
    scrape: cluster ? cluster.scrape : () => registry.metrics(),
    contentType: registry.contentType,
    modelLabel: (model) => (models.has(model) ? model : UNKNOWN_MODEL_LABEL),
    requests: new Counter({
      name: 'tollgate_requests_total',
      help: 'Completion requests by vendor, model and HTTP status.',
      labelNames: ['vendor', 'model', 'status'],
      registers,
    }),
    tokens: new Counter({
      name: 'tollgate_tokens_total',
      help: 'Metered tokens by account, model and kind (prompt|completion).',
      labelNames: ['account', 'model', 'kind'],
      registers,
    }),
    cost: new Counter({
      name: 'tollgate_cost_usd_total',
      help: 'What metered requests cost at the configured prices, in US dollars, by account and model.',
      labelNames: ['account', 'model'],
      registers,
    }),
    latency: new Histogram({
      name: 'tollgate_request_duration_seconds',
      help: 'Total request latency.',
      labelNames: ['vendor', 'stream'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    timeToFirstByte: new Histogram({
      name: 'tollgate_time_to_first_token_seconds',
      help: 'Time from request to first generated token.',
      labelNames: ['vendor'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    inFlightStreams: new Gauge({ name: 'tollgate_in_flight_streams', help: 'Streams currently open.', registers }),
    ledgerWrite: new Histogram({
      name: 'tollgate_ledger_write_seconds',
      help: 'Ledger write latency.',
      buckets: [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1],
      registers,
    }),
    gatewayOverhead: new Histogram({
      name: 'tollgate_gateway_overhead_seconds',
      help: 'Time the gateway spends before the vendor call (auth, validation, routing, admission).',
      buckets: [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05],
      registers,
    }),
    close() {
      stopListening();
      cluster?.close();
    },
  };
}
