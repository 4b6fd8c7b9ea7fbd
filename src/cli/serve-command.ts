import type { Command } from 'commander';
import type { Config } from '../config/config.js';
import { startServer } from '../server/start-server.js';

export function registerServeCommand(program: Command, loadConfig: () => Config): void {
  program
    .command('serve', { isDefault: true })
    .description('start the gateway (same as npm start)')
    .action(async () => {
      const config = loadConfig();
      const server = await startServer(config);
      const onSignal = (signal: NodeJS.Signals) => {
        server.logger.info({ signal }, 'draining');
        server.stop().then(() => process.exit(0), () => process.exit(1));
      };
      process.once('SIGTERM', onSignal);
      process.once('SIGINT', onSignal);
    });
}
