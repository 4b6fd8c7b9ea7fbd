/** Prometheus metrics through prom-client, one registry per app (so tests can build several apps). */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { labelChildren } from './label-children.js';
import { listenToUpstream } from './upstream-events.js';

export interface Metrics {
  registry: Registry;
  requests: Counter<'vendor' | 'model' | 'status'>;
  tokens: Counter<'account' | 'model' | 'kind'>;
  latency: Histogram<'vendor' | 'stream'>;
  timeToFirstByte: Histogram<'vendor'>;
  inFlightStreams: Gauge;
  ledgerWrite: Histogram;
  upstreamLatency: Histogram<'vendor' | 'outcome'>;
  upstreamErrors: Counter<'vendor' | 'code'>;
  upstreamRetries: Counter<'vendor'>;
  gatewayOverhead: Histogram;
  /** Cached label children of the per-request metrics (values in labelNames order). */
  requestsFor(vendor: string, model: string, status: string): ReturnType<Counter<string>['labels']>;
  tokensFor(account: string, model: string, kind: 'prompt' | 'completion'): ReturnType<Counter<string>['labels']>;
  latencyFor(vendor: string, stream: string): ReturnType<Histogram<string>['labels']>;
  timeToFirstByteFor(vendor: string): ReturnType<Histogram<string>['labels']>;
  /** Stop listening to upstream events. */
  close(): void;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const upstreamLatency = new Histogram({ name: 'tollgate_upstream_latency_seconds', help: 'Upstream time to response headers, by vendor and status (or error code).', labelNames: ['vendor', 'outcome'], buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers: [registry] });
  const upstreamErrors = new Counter({ name: 'tollgate_upstream_errors_total', help: 'Upstream calls that failed, by vendor and status or error code.', labelNames: ['vendor', 'code'], registers: [registry] });
  const upstreamRetries = new Counter({ name: 'tollgate_upstream_retries_total', help: 'Upstream calls retried, by vendor.', labelNames: ['vendor'], registers: [registry] });
  const upstreamLatencyFor = labelChildren((...values) => upstreamLatency.labels(...values));
  const upstreamErrorsFor = labelChildren((...values) => upstreamErrors.labels(...values));
  const stopListening = listenToUpstream({
    call(vendor, seconds, outcome) {
      upstreamLatencyFor(vendor, outcome).observe(seconds);
      if (outcome.length !== 3 || outcome[0] !== '2') upstreamErrorsFor(vendor, outcome).inc();
    },
    retry(vendor) {
      upstreamRetries.inc({ vendor });
    },
  });
  const requests = new Counter({ name: 'tollgate_requests_total', help: 'Completion requests by vendor, model and HTTP status.', labelNames: ['vendor', 'model', 'status'], registers: [registry] });
  const tokens = new Counter({ name: 'tollgate_tokens_total', help: 'Metered tokens by account, model and kind (prompt|completion).', labelNames: ['account', 'model', 'kind'], registers: [registry] });
  const latency = new Histogram({ name: 'tollgate_request_duration_seconds', help: 'Total request latency.', labelNames: ['vendor', 'stream'], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60], registers: [registry] });
  const timeToFirstByte = new Histogram({ name: 'tollgate_time_to_first_token_seconds', help: 'Time from request to first generated token.', labelNames: ['vendor'], buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers: [registry] });
  return {
    upstreamLatency,
    upstreamErrors,
    upstreamRetries,
    gatewayOverhead: new Histogram({ name: 'tollgate_gateway_overhead_seconds', help: 'Time the gateway spends before the vendor call (auth, validation, routing, admission).', buckets: [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05], registers: [registry] }),
    close: stopListening,
    registry,
    requests,
    tokens,
    latency,
    timeToFirstByte,
    requestsFor: labelChildren((...values) => requests.labels(...values)),
    tokensFor: labelChildren((...values) => tokens.labels(...values)),
    latencyFor: labelChildren((...values) => latency.labels(...values)),
    timeToFirstByteFor: labelChildren((...values) => timeToFirstByte.labels(...values)),
    inFlightStreams: new Gauge({ name: 'tollgate_in_flight_streams', help: 'Streams currently open.', registers: [registry] }),
    ledgerWrite: new Histogram({ name: 'tollgate_ledger_write_seconds', help: 'Ledger write latency.', buckets: [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1], registers: [registry] }),
  };
}
