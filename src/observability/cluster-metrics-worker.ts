/**
 * A cluster worker's side of `GET /metrics`: the scrape is handed to the primary, which asks every
 * worker for its registry and answers with the aggregate (cluster-metrics-primary.ts); meanwhile
 * this worker answers the primary's collections from its own registry.
 */
import type { Registry } from 'prom-client';
import { serviceUnavailable, type GatewayError } from '../errors/gateway-error.js';
import { ignoreClosedChannel, isMessage, type Message } from './cluster-metrics-messages.js';

type ScrapeAnswer = Message<'tollgate-metrics-scraped'>;

/** How long a scrape waits for the primary; longer than the primary waits for the workers, so a slow worker makes the answer partial, not absent. */
const scrapeTimeoutMs = 5_000;

export interface ClusterMetricsWorker {
  /** The whole cluster's metrics in the Prometheus text format; throws a 503 GatewayError when the primary does not answer. */
  scrape(): Promise<string>;
  /** Stops answering the primary. */
  close(): void;
}

export function createClusterMetricsWorker(registry: Registry): ClusterMetricsWorker {
  const waiting = new Map<number, (answer: ScrapeAnswer) => void>();
  let nextScrape = 0;
  const onMessage = (message: unknown) => {
    if (isMessage(message, 'tollgate-metrics-collect')) {
      void registry.getMetricsAsJSON().then((metrics) => {
        const answer: Message<'tollgate-metrics-collected'> = { type: 'tollgate-metrics-collected', id: message.id, metrics };
        // A primary that is gone needs no answer (and the worker leaves with it).
        if (process.connected) process.send?.(answer, undefined, {}, ignoreClosedChannel);
      });
    } else if (isMessage(message, 'tollgate-metrics-scraped')) {
      waiting.get(message.id)?.(message);
    }
  };
  process.on('message', onMessage);
  return {
    async scrape() {
      const id = nextScrape++;
      const answer = await new Promise<ScrapeAnswer | null>((resolve) => {
        const timer = setTimeout(() => settle(null), scrapeTimeoutMs);
        function settle(result: ScrapeAnswer | null) {
          clearTimeout(timer);
          waiting.delete(id);
          resolve(result);
        }
        waiting.set(id, settle);
        const request: Message<'tollgate-metrics-scrape'> = { type: 'tollgate-metrics-scrape', id };
        if (!process.connected || !process.send) settle(null);
        else
          process.send(request, undefined, {}, (error: Error | null) => {
            if (error) settle(null);
          });
      });
      if (answer?.text === undefined) throw metricsUnavailable(answer?.error);
      return answer.text;
    },
    close() {
      process.off('message', onMessage);
    },
  };
}

function metricsUnavailable(reason: string | undefined): GatewayError {
  const why = reason ? `: ${reason}` : ': the primary process did not answer in time';
  return serviceUnavailable(`The cluster's metrics could not be gathered${why}. Scrape again.`, 'metrics_unavailable');
}
