/**
 * The messages a `serve --workers N` cluster exchanges over its IPC channels so that a scrape
 * landing on any worker answers with every worker's metrics (cluster-metrics-worker.ts and
 * cluster-metrics-primary.ts). The metrics travel as prom-client's own JSON form.
 */
import type { Registry } from 'prom-client';

/** One registry's metrics as `registry.getMetricsAsJSON()` gives them. */
export type MetricsSnapshot = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/**
 * A worker asks the primary for the cluster's metrics (`scrape`) and gets them in the Prometheus
 * text format, or why there are none (`scraped`); the primary asks every worker for its own
 * (`collect`) and each answers (`collected`). An answer echoes the id its asker chose.
 */
type ClusterMetricsMessage =
  | { type: 'tollgate-metrics-scrape'; id: number }
  | { type: 'tollgate-metrics-scraped'; id: number; text?: string; error?: string }
  | { type: 'tollgate-metrics-collect'; id: number }
  | { type: 'tollgate-metrics-collected'; id: number; metrics: MetricsSnapshot };

export type Message<Type extends ClusterMetricsMessage['type']> = Extract<ClusterMetricsMessage, { type: Type }>;

/** Whether an IPC message is the cluster-metrics message of this type (other messages share the channel). */
export function isMessage<Type extends ClusterMetricsMessage['type']>(message: unknown, type: Type): message is Message<Type> {
  return typeof message === 'object' && message !== null && 'type' in message && message.type === type && 'id' in message && typeof message.id === 'number';
}

/** The send callback for an answer whose channel may have closed meanwhile: nothing to do. */
export function ignoreClosedChannel(): void {}
