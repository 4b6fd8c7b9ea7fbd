/** Prometheus metrics through prom-client, one registry per app (so tests can build several apps). */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
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
  /** Stop listening to upstream events. */
  close(): void;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const upstreamLatency = new Histogram({ name: 'tollgate_upstream_latency_seconds', help: 'Upstream time to response headers, by vendor and status (or error code).', labelNames: ['vendor', 'outcome'], buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers: [registry] });
  const upstreamErrors = new Counter({ name: 'tollgate_upstream_errors_total', help: 'Upstream calls that failed, by vendor and status or error code.', labelNames: ['vendor', 'code'], registers: [registry] });
  const upstreamRetries = new Counter({ name: 'tollgate_upstream_retries_total', help: 'Upstream calls retried, by vendor.', labelNames: ['vendor'], registers: [registry] });
  const stopListening = listenToUpstream({
    call(vendor, seconds, outcome) {
      upstreamLatency.observe({ vendor, outcome }, seconds);
      if (!/^2\d\d$/.test(outcome)) upstreamErrors.inc({ vendor, code: outcome });
    },
    retry(vendor) {
      upstreamRetries.inc({ vendor });
    },
  });
  return {
    upstreamLatency,
    upstreamErrors,
    upstreamRetries,
    gatewayOverhead: new Histogram({ name: 'tollgate_gateway_overhead_seconds', help: 'Time the gateway spends before the vendor call (auth, validation, routing, admission).', buckets: [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05], registers: [registry] }),
    close: stopListening,
    registry,
    requests: new Counter({ name: 'tollgate_requests_total', help: 'Completion requests by vendor, model and HTTP status.', labelNames: ['vendor', 'model', 'status'], registers: [registry] }),
    tokens: new Counter({ name: 'tollgate_tokens_total', help: 'Metered tokens by account, model and kind (prompt|completion).', labelNames: ['account', 'model', 'kind'], registers: [registry] }),
    latency: new Histogram({ name: 'tollgate_request_duration_seconds', help: 'Total request latency.', labelNames: ['vendor', 'stream'], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60], registers: [registry] }),
    timeToFirstByte: new Histogram({ name: 'tollgate_time_to_first_token_seconds', help: 'Time from request to first generated token.', labelNames: ['vendor'], buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers: [registry] }),
    inFlightStreams: new Gauge({ name: 'tollgate_in_flight_streams', help: 'Streams currently open.', registers: [registry] }),
    ledgerWrite: new Histogram({ name: 'tollgate_ledger_write_seconds', help: 'Ledger write latency.', buckets: [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1], registers: [registry] }),
  };
}
