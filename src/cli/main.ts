/** The `tollgate` command line. Every command reads the same DATABASE_URL as the server. */
import { Command, CommanderError } from 'commander';
import { loadConfig } from '../config/config.js';
import { packageVersion } from '../config/package-version.js';
import { registerAdminCommands } from './admin-commands.js';
import { registerServeCommand } from './serve-command.js';

export async function main(argv: string[]): Promise<void> {
  const program = new Command('tollgate')
    .description('Tollgate, an LLM gateway for the text-completions API')
    .version(packageVersion())
    .showHelpAfterError(false)
    .exitOverride();
  registerServeCommand(program, loadConfig);
  registerAdminCommands(program, loadConfig);
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.exitCode === 0) return;
      process.exitCode = error.exitCode || 1;
      return; // commander already printed its one-line message
    }
    // A 503 from storage says what the database answered, so the operator sees why.
    const { message, cause } = error as Error;
    process.stderr.write(`tollgate: ${message}${cause instanceof Error ? ` (${cause.message})` : ''}\n`);
    process.exitCode = 1;
  }
}
