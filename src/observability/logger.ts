/** JSON-lines logging on stdout through pino. Secrets are redacted by path as a second line of defence. */
import { pino, type Logger as PinoLogger } from 'pino';

export type Logger = PinoLogger;

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: {
        paths: ['apiKey', 'key', 'authorization', 'headers.authorization', 'headers["x-api-key"]', '*.apiKey', 'prompt'],
        censor: '[redacted]',
      },
    },
    destination ?? bufferedStdout(),
  );
}

/** stdout written in 4 KiB batches (one syscall per ~20 lines, not per line), flushed every 250 ms. */
function bufferedStdout() {
  const stream = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  const timer = setInterval(() => {
    try { stream.flush(); } catch { /* not open yet, or a flush is running */ }
  }, 250);
  timer.unref();
  process.once('exit', () => {
    try { stream.flushSync(); } catch { /* stdout already gone */ }
  });
  return stream;
}
