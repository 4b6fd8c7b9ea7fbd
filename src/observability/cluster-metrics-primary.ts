/**
 * The primary's side of `GET /metrics` under `serve --workers N`: every worker's registry combined
 * with prom-client's `AggregatorRegistry.aggregate`. Not its `clusterMetrics()`, which sums only
 * the live workers, so counters went down when one died: here an exited worker's last counters and
 * histograms stay in the sum.
 */
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import { ignoreClosedChannel, isMessage, type Message, type MetricsSnapshot } from './cluster-metrics-messages.js';

/** How long a collection waits for the workers; one that has not answered by then counts with its previous report. */
const collectionTimeoutMs = 2_000;

/** Metric types whose values are totals since the worker started, and so outlive it. */
const cumulativeTypes = new Set(['counter', 'histogram']);

interface Collection {
  /** Workers (by cluster id) that have not answered yet. */
  pending: Set<number>;
  finish(): void;
}

export class ClusterMetricsPrimary {
  /** Each live worker's last report, by cluster worker id. */
  private readonly latest = new Map<number, MetricsSnapshot>();
  /** The cumulative metrics of workers that exited, merged into one snapshot from time to time. */
  private departed: MetricsSnapshot[] = [];
  private merging = false;
  private readonly collections = new Map<number, Collection>();
  private nextCollection = 0;

  /** Starts answering the workers' scrapes, for the rest of the primary's life. */
  listen(): void {
    cluster.on('message', (worker: Worker, message: unknown) => {
      if (isMessage(message, 'tollgate-metrics-scrape')) void this.answer(worker, message.id);
      else if (isMessage(message, 'tollgate-metrics-collected')) this.collected(worker.id, message.id, message.metrics);
    });
    cluster.on('exit', (worker: Worker) => this.departedWorker(worker.id));
  }

  /** Answers a scrape with every worker's metrics, in the Prometheus text format. */
  private async answer(worker: Worker, id: number): Promise<void> {
    let answer: Message<'tollgate-metrics-scraped'>;
    try {
      await this.collect();
      const text = await AggregatorRegistry.aggregate([...this.departed, ...this.latest.values()]).metrics();
      answer = { type: 'tollgate-metrics-scraped', id, text };
    } catch (error) {
      answer = { type: 'tollgate-metrics-scraped', id, error: (error as Error).message };
    }
    if (worker.isConnected()) worker.send(answer, undefined, ignoreClosedChannel);
  }

  /** Asks every connected worker for its metrics; resolves once all answered, exited, or the timeout passed. */
  private collect(): Promise<void> {
    const id = this.nextCollection++;
    const request: Message<'tollgate-metrics-collect'> = { type: 'tollgate-metrics-collect', id };
    const workers = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker?.isConnected() === true);
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => collection.finish(), collectionTimeoutMs);
      const collection: Collection = {
        pending: new Set(workers.map((worker) => worker.id)),
        finish: () => {
          clearTimeout(timer);
          this.collections.delete(id);
          resolve();
        },
      };
      this.collections.set(id, collection);
      for (const worker of workers) {
        worker.send(request, undefined, (error: Error | null) => {
          if (error) this.answered(collection, worker.id);
        });
      }
      if (collection.pending.size === 0) collection.finish();
    });
  }

  private collected(workerId: number, collectionId: number, metrics: MetricsSnapshot): void {
    // Only a worker still alive: one that exited meanwhile already moved its report to `departed`.
    if (!cluster.workers?.[workerId]) return;
    this.latest.set(workerId, metrics);
    const collection = this.collections.get(collectionId);
    if (collection) this.answered(collection, workerId);
  }

  private answered(collection: Collection, workerId: number): void {
    collection.pending.delete(workerId);
    if (collection.pending.size === 0) collection.finish();
  }

  private departedWorker(workerId: number): void {
    const last = this.latest.get(workerId);
    this.latest.delete(workerId);
    if (last) {
      this.departed.push(last.filter((metric) => cumulativeTypes.has(String(metric.type))));
      void this.mergeDeparted();
    }
    for (const collection of [...this.collections.values()]) if (collection.pending.has(workerId)) this.answered(collection, workerId);
  }

  /**
   * Folds the departed workers' reports into one, so a worker that keeps crashing does not grow the
   * primary's memory. The list is replaced only once the merge is done, and reports added meanwhile
   * are kept, so a scrape during the merge still sees every count.
   */
  private async mergeDeparted(): Promise<void> {
    if (this.merging) return;
    this.merging = true;
    try {
      while (this.departed.length > 1) {
        const merging = this.departed.slice();
        const merged = await AggregatorRegistry.aggregate(merging).getMetricsAsJSON();
        this.departed = [merged, ...this.departed.slice(merging.length)];
      }
    } finally {
      this.merging = false;
    }
  }
}
