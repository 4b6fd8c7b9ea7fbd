import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import type { Command } from 'commander';
import type { Config } from '../config/config.js';
import { attachWorker, CHECKPOINTS_VARIABLE, runPrimary } from '../server/cluster-primary.js';
import { applyHeapPolicy } from '../server/heap-policy.js';
import { startServer } from '../server/start-server.js';
import { positiveInteger } from './cli-arguments.js';

export function registerServeCommand(program: Command, loadConfig: () => Config): void {
  program
    .command('serve', { isDefault: true })
    .description('start the gateway (same as npm start)')
    .option('--workers <n>', 'worker processes sharing the port (default: one per core)', positiveInteger)
    .action(async (options: { workers?: number }) => {
      const config = loadConfig();
      applyHeapPolicy({ growingPercent: config.heapGrowingPercent, parallelScavenge: config.parallelScavenge, wasmTierUp: config.wasmTierUp });
      if (cluster.isWorker) {
        // The primary gives one worker at a time the SQLite checkpoints (cluster-primary.ts).
        const sqliteCheckpoints = process.env[CHECKPOINTS_VARIABLE] !== '0';
        const server = await startServer(config, { announce: false, bootstrap: false, sqliteCheckpoints }).catch((error: unknown) => {
          // A worker that cannot start leaves the cluster, so it can exit once its line is written (main.ts).
          process.disconnect?.();
          throw error;
        });
        attachWorker(server.url, server.registry.listModels()[0]?.id ?? null, server.stop);
        return;
      }
      const workers = options.workers ?? availableParallelism();
      if (workers < 1) throw new Error('--workers must be at least 1');
      if (workers > 1) return runPrimary(config, workers);
      const server = await startServer(config);
      const onSignal = (signal: NodeJS.Signals) => {
        server.logger.info({ signal }, 'draining');
        server.stop().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      process.once('SIGTERM', onSignal);
      process.once('SIGINT', onSignal);
    });
}
