/** Opens storage and vendors, builds the app, listens, and stops gracefully on SIGTERM/SIGINT. */
import cluster from 'node:cluster';
import { buildApp } from '../app.js';
import type { Config } from '../config/config.js';
import { serviceUnavailable } from '../errors/gateway-error.js';
import { createLogger, type Logger } from '../observability/logger.js';
import { createMetrics } from '../observability/metrics.js';
import { createStorage } from '../storage/create-storage.js';
import type { Storage } from '../storage/types.js';
import { createAdmission } from '../usage/quota-admission.js';
import { createAdapters } from '../vendors/create-adapters.js';
import { createVendorRegistry, type VendorRegistry } from '../vendors/registry.js';
import { announce, bootstrapDefaultAccount, type BootstrapResult } from './bootstrap-account.js';

/** How long the answers given at the shutdown deadline have to leave before their connections are cut. */
const cutAfterAnswersMs = 1_000;

export interface RunningServer {
  url: string;
  storage: Storage;
  registry: VendorRegistry;
  logger: Logger;
  /** The account and key created on an empty database, or null. */
  bootstrapped: BootstrapResult | null;
  /** Stops accepting, drains in-flight requests up to the grace period, closes everything. */
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Print the banner (address, first key) to stdout. */
  announce?: boolean;
  /** Create the default account on an empty database (the primary process only, in cluster mode). */
  bootstrap?: boolean;
  /** Log destination override (tests capture logs). */
  logger?: Logger;
  /** SQLite: whether this process runs the WAL checkpoints (default true; a cluster worker is told; see create-storage.ts). */
  sqliteCheckpoints?: boolean;
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const storage = await createStorage(config.databaseUrl, { sqliteCheckpoints: options.sqliteCheckpoints });
  await storage.migrate();
  // Said by the cluster worker that was given the role (a single process always has it).
  if (options.sqliteCheckpoints === true && storage.kind === 'sqlite') logger.info({ pid: process.pid }, 'SQLite checkpoints run in this process');
  const bootstrapped = options.bootstrap === false ? null : await bootstrapDefaultAccount(storage);
  const { adapters, disabled } = await createAdapters({ config, logger });
  const registry = createVendorRegistry(adapters, disabled);
  const admission = await createAdmission(config, storage, logger);
  const metrics = createMetrics({
    // The catalogue and the configured aliases are the only model names that become metric labels.
    models: [...registry.listModels().map((model) => model.id), ...Object.keys(config.aliases)],
    // A `serve --workers N` worker: a scrape may land on any worker, so each answers for them all.
    scope: cluster.isWorker ? 'cluster' : 'process',
  });
  const { server, pipeline, inFlight } = buildApp({ config, storage, registry, admission, logger, metrics });
  await server.listen({ host: config.host, port: config.port });
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  if (options.announce !== false) announce(url, null, bootstrapped, registry.listModels()[0]?.id);
  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      // Past the grace period, what still runs is answered (a 503, or an error event ending its
      // stream) and recorded; connections still open a moment later are cut.
      let cut: NodeJS.Timeout | undefined;
      const deadline = setTimeout(() => {
        inFlight.abortAll(serviceUnavailable('The gateway is shutting down; retry on another instance or shortly.', 'shutting_down'));
        cut = setTimeout(() => server.server.closeAllConnections(), cutAfterAnswersMs).unref();
      }, config.shutdownGraceMs);
      deadline.unref();
      await server.close();
      clearTimeout(deadline);
      clearTimeout(cut);
      // Streams cut at the deadline settle their ledger records asynchronously: wait for them.
      await pipeline.drain(5_000);
      await registry.close();
      await admission.close();
      await storage.close();
      logger.flush();
    })());
  return { url, storage, registry, logger, bootstrapped, stop };
}
