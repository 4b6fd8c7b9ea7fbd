/**
 * `tollgate serve --workers N`: the primary migrates, bootstraps the first account, holds the
 * shared rate-limit/budget counters (when there is no Redis), forks N workers that share one
 * port, passes their output on in whole lines, answers their `/metrics` scrapes with every
 * worker's metrics, restarts a worker that dies, and drains them all on SIGTERM/SIGINT.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Config } from '../config/config.js';
import { ClusterMetricsPrimary } from '../observability/cluster-metrics-primary.js';
import { createStorage } from '../storage/create-storage.js';
import { MemoryCounterStore } from '../usage/counter-store.js';
import { serveCounters } from '../usage/primary-counter-store.js';
import { announce, bootstrapDefaultAccount } from './bootstrap-account.js';
import { exitAfterRelays, relayWorkerOutput } from './relay-worker-output.js';

interface ListeningMessage {
  type: 'tollgate-listening';
  url: string;
  firstModel: string | null;
}

/**
 * Set by the primary in each worker's environment: '1' for the one worker that runs the SQLite
 * WAL checkpoints, '0' for the others (they share the file; one checkpointer serves them all).
 */
export const CHECKPOINTS_VARIABLE = 'TOLLGATE_SQLITE_CHECKPOINTS';

export async function runPrimary(config: Config, workerCount: number): Promise<void> {
  // Only migrations and the first account: no checkpoints for that (the workers run them).
  const storage = await createStorage(config.databaseUrl, { sqliteCheckpoints: false });
  await storage.migrate();
  const bootstrapped = await bootstrapDefaultAccount(storage);
  await storage.close();

  const counters = new MemoryCounterStore();
  new ClusterMetricsPrimary().listen();
  let shuttingDown = false;
  let announced = false;
  const listening = new Set<number>();

  // Workers' stdout and stderr come to the primary, which alone writes them out (relay-worker-output.ts).
  cluster.setupPrimary({ silent: true });
  const relays = new Set<Promise<void>>();
  // 1 when start-up failed: a worker ended before the gateway listened.
  let exitCode = 0;
  // The last lines the workers wrote before exiting are still on their way: pass them on first.
  const exit = () => exitAfterRelays(relays, [process.stdout, process.stderr], exitCode);
  // The worker running the SQLite checkpoints; when it exits, the next worker forked takes over.
  let checkpointer: number | null = null;
  const fork = (): Worker => {
    const checkpoints = checkpointer === null;
    const worker = cluster.fork({ TOLLGATE_WORKER: '1', [CHECKPOINTS_VARIABLE]: checkpoints ? '1' : '0' });
    if (checkpoints) checkpointer = worker.id;
    for (const [source, target] of [
      [worker.process.stdout, process.stdout],
      [worker.process.stderr, process.stderr],
    ] as const) {
      if (!source) continue;
      const relay = relayWorkerOutput(source, target);
      relays.add(relay);
      void relay.then(() => relays.delete(relay));
    }
    serveCounters(worker, counters);
    worker.on('message', (message: ListeningMessage) => {
      if (message?.type !== 'tollgate-listening') return;
      listening.add(worker.id);
      if (!announced && listening.size >= workerCount) {
        announced = true;
        announce(message.url, workerCount, bootstrapped, message.firstModel ?? undefined);
      }
    });
    return worker;
  };

  cluster.on('exit', (worker, code, signal) => {
    listening.delete(worker.id);
    if (worker.id === checkpointer) checkpointer = null;
    // A worker that ends before the gateway ever listened could not start (its own line on stderr
    // says why, e.g. the port is taken): forking it again would fail the same way, so stop with 1.
    if (!announced && !shuttingDown) {
      exitCode = 1;
      shutdown();
    }
    if (shuttingDown) {
      if (Object.keys(cluster.workers ?? {}).length === 0) exit();
      return;
    }
    process.stderr.write(`worker ${worker.process.pid} exited (${signal ?? code}); starting a new one\n`);
    setTimeout(fork, 200);
  });

  const shutdown = () => {
    if (shuttingDown) return;
    shuttingDown = true;
    const workers = Object.values(cluster.workers ?? {}).filter(Boolean) as Worker[];
    if (workers.length === 0) exit();
    for (const worker of workers) {
      // Before the gateway listened, a worker may not be listening for the word yet: a signal reaches it either way.
      if (!announced) worker.process.kill('SIGTERM');
      else if (worker.isConnected()) worker.send({ type: 'tollgate-shutdown' });
    }
    // Workers drain within the grace period themselves; this is the backstop.
    setTimeout(() => process.exit(exitCode), config.shutdownGraceMs + 5_000).unref();
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);

  for (let index = 0; index < workerCount; index++) fork();
}

/** Worker side: report the address once listening, drain on the primary's word, die with it. */
export function attachWorker(url: string, firstModel: string | null, stop: () => Promise<void>): void {
  const leave = (code: number) => process.exit(code);
  let stopping = false;
  const drain = () => {
    if (stopping) return;
    stopping = true;
    stop().then(
      () => leave(0),
      () => leave(1),
    );
  };
  process.on('message', (message: { type?: string }) => {
    if (message?.type === 'tollgate-shutdown') drain();
  });
  process.on('SIGTERM', drain);
  process.on('SIGINT', drain);
  // The primary is gone (killed): nothing is left to coordinate with, so stop serving at once.
  process.on('disconnect', () => {
    if (!stopping) leave(1);
  });
  process.send?.({ type: 'tollgate-listening', url, firstModel } satisfies ListeningMessage);
}
