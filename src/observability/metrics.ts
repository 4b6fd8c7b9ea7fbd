/**
 * Prometheus metrics, one registry per app (so tests can build several apps). prom-client renders
 * the registry and supplies the process metrics; the per-request counters and histograms are
 * metric-families.ts (bound children, no per-update label hashing).
 */
import { performance } from 'node:perf_hooks';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { CounterFamily, HistogramFamily } from './metric-families.js';
import { listenToUpstream } from './upstream-events.js';

export interface Metrics {
  registry: Registry;
  requests: CounterFamily;
  tokens: CounterFamily;
  latency: HistogramFamily;
  timeToFirstByte: HistogramFamily;
  inFlightStreams: Gauge;
  ledgerWrite: HistogramFamily;
  upstreamLatency: HistogramFamily;
  upstreamErrors: CounterFamily;
  upstreamRetries: CounterFamily;
  gatewayOverhead: HistogramFamily;
  /** Stop listening to upstream events. */
  close(): void;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const upstreamLatency = new HistogramFamily({ name: 'tollgate_upstream_latency_seconds', help: 'Upstream time to response headers, by vendor and status (or error code).', labelNames: ['vendor', 'outcome'], buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registry });
  const upstreamErrors = new CounterFamily({ name: 'tollgate_upstream_errors_total', help: 'Upstream calls that failed, by vendor and status or error code.', labelNames: ['vendor', 'code'], registry });
  const upstreamRetries = new CounterFamily({ name: 'tollgate_upstream_retries_total', help: 'Upstream calls retried, by vendor.', labelNames: ['vendor'], registry });
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
    registers: [registry],
    collect() {
      const activeSeconds = performance.eventLoopUtilization().active / 1000;
      this.reset();
      this.inc(activeSeconds);
    },
  });
  // Callers bind children with label values in labelNames order (see request-observer.ts).
  const requests = new CounterFamily({ name: 'tollgate_requests_total', help: 'Completion requests by vendor, model and HTTP status.', labelNames: ['vendor', 'model', 'status'], registry });
  const tokens = new CounterFamily({ name: 'tollgate_tokens_total', help: 'Metered tokens by account, model and kind (prompt|completion).', labelNames: ['account', 'model', 'kind'], registry });
  const latency = new HistogramFamily({ name: 'tollgate_request_duration_seconds', help: 'Total request latency.', labelNames: ['vendor', 'stream'], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60], registry });
  const timeToFirstByte = new HistogramFamily({ name: 'tollgate_time_to_first_token_seconds', help: 'Time from request to first generated token.', labelNames: ['vendor'], buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registry });
  return {
    upstreamLatency,
    upstreamErrors,
    upstreamRetries,
    gatewayOverhead: new HistogramFamily({ name: 'tollgate_gateway_overhead_seconds', help: 'Time the gateway spends before the vendor call (auth, validation, routing, admission).', buckets: [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05], registry }),
    close: stopListening,
    registry,
    requests,
    tokens,
    latency,
    timeToFirstByte,
    inFlightStreams: new Gauge({ name: 'tollgate_in_flight_streams', help: 'Streams currently open.', registers: [registry] }),
    ledgerWrite: new HistogramFamily({ name: 'tollgate_ledger_write_seconds', help: 'Ledger write latency.', buckets: [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1], registry }),
  };
}
