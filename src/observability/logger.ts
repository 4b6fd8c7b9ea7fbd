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
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}
