/**
 * JSON-lines logging on stdout through pino. Log calls never receive keys, headers or prompts
 * (the request line is built from named fields only; test/security-gateway.test.ts scans the logs),
 * so no per-line redaction pass is paid on the hot path.
 */
import { pino, type Logger as PinoLogger } from 'pino';

export type Logger = PinoLogger;

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: undefined,
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
