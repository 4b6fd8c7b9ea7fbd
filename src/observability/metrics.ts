/** Prometheus metrics through prom-client, one registry per app (so tests can build several apps). */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  requests: Counter<'vendor' | 'model' | 'status'>;
  tokens: Counter<'account' | 'model' | 'kind'>;
  latency: Histogram<'vendor' | 'stream'>;
  timeToFirstByte: Histogram<'vendor'>;
  inFlightStreams: Gauge;
  ledgerWrite: Histogram;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    requests: new Counter({ name: 'tollgate_requests_total', help: 'Completion requests by vendor, model and HTTP status.', labelNames: ['vendor', 'model', 'status'], registers: [registry] }),
    tokens: new Counter({ name: 'tollgate_tokens_total', help: 'Metered tokens by account, model and kind (prompt|completion).', labelNames: ['account', 'model', 'kind'], registers: [registry] }),
    latency: new Histogram({ name: 'tollgate_request_duration_seconds', help: 'Total request latency.', labelNames: ['vendor', 'stream'], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60], registers: [registry] }),
    timeToFirstByte: new Histogram({ name: 'tollgate_time_to_first_token_seconds', help: 'Time from request to first generated token.', labelNames: ['vendor'], buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers: [registry] }),
    inFlightStreams: new Gauge({ name: 'tollgate_in_flight_streams', help: 'Streams currently open.', registers: [registry] }),
    ledgerWrite: new Histogram({ name: 'tollgate_ledger_write_seconds', help: 'Ledger write latency.', buckets: [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1], registers: [registry] }),
  };
}
