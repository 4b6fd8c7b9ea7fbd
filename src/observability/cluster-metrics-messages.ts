/**
 * The messages a `serve --workers N` cluster exchanges over its IPC channels so that a scrape
 * landing on any worker answers with every worker's metrics (cluster-metrics-worker.ts and
 * cluster-metrics-primary.ts). The metrics travel as prom-client's own JSON form.
 */
import type { Registry } from 'prom-client';

/** One registry's metrics as `registry.getMetricsAsJSON()` gives them. */
export type MetricsSnapshot = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/** Worker → primary: a client scraped this worker; answer with the cluster's metrics. */
export interface ScrapeRequest {
  type: 'tollgate-metrics-scrape';
  /** Chosen by the worker, echoed in the answer. */
  id: number;
}

/** Primary → worker: the cluster's metrics in the Prometheus text format, or why there are none. */
export interface ScrapeAnswer {
  type: 'tollgate-metrics-scraped';
  id: number;
  text?: string;
  error?: string;
}

/** Primary → every worker: send your own metrics. */
export interface CollectRequest {
  type: 'tollgate-metrics-collect';
  /** Chosen by the primary, echoed in the answer. */
  id: number;
}

/** Worker → primary: this worker's own metrics. */
export interface CollectAnswer {
  type: 'tollgate-metrics-collected';
  id: number;
  metrics: MetricsSnapshot;
}

type ClusterMetricsMessage = ScrapeRequest | ScrapeAnswer | CollectRequest | CollectAnswer;

/** Whether an IPC message is the cluster-metrics message of this type (other messages share the channel). */
export function isMessage<Type extends ClusterMetricsMessage['type']>(message: unknown, type: Type): message is Extract<ClusterMetricsMessage, { type: Type }> {
  return typeof message === 'object' && message !== null && 'type' in message && message.type === type && 'id' in message && typeof message.id === 'number';
}
