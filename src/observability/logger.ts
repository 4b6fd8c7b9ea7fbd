/**
 * JSON-lines logging on stdout through pino. Log calls never receive keys, headers or prompts
 * (the request line is built from named fields only; test/security-gateway.test.ts scans the logs),
 * so no per-line redaction pass is paid on the hot path.
 */
import { writeSync } from 'node:fs';
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';

export type Logger = PinoLogger;

/** What every log line about one request carries, so the lines can be found from what the client holds. */
export interface RequestLogIds {
  /** The `x-request-id` the client received. */
  requestId: string;
  /** The completion's id (`cmpl-…`), the response's `id` and the ledger record's key. */
  completionId: string;
}

/** A pino logger at `level` writing JSON lines to `destination` (default: stdout, batched below). */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
    },
    destination ?? bufferedStdout(),
  );
}

/**
 * stdout in 64 KiB batches, encoded as lines arrive (Buffers: strings held for a batch outlived
 * young-generation GCs) and written in one `writeSync` when full or every 250 ms: 4 KiB batches
 * cost 6–7 µs a request more. Not pino's sonic-boom: its asynchronous mode lost writes in flight at
 * exit, its synchronous mode sleeps 100 ms on a full pipe. A full pipe leaves the rest queued, never
 * blocking; past 16 MiB batches are dropped (counted on stderr). At exit the queue is written out,
 * waiting up to 2 s.
 */
const batchBytes = 64 * 1024;
const queueLimitBytes = 16 * 1024 * 1024;

class StdoutBatches {
  private batch = Buffer.allocUnsafe(batchBytes);
  private used = 0;
  private readonly queue: Buffer[] = [];
  private queuedBytes = 0;
  private droppedBytes = 0;
  private droppedReportedAt = 0;
  private broken = false;

  constructor(private readonly fd: number) {}

  write(line: string): boolean {
    // UTF-8 takes at most 3 bytes per UTF-16 unit: checked without measuring the line.
    if (this.used + line.length * 3 > batchBytes) {
      this.pass();
      if (line.length * 3 > batchBytes) {
        this.enqueue(Buffer.from(line, 'utf8'));
        this.drain();
        return true;
      }
    }
    this.used += this.batch.write(line, this.used, 'utf8');
    return true;
  }

  /** Queues the current batch and writes what the pipe takes now. */
  pass(): void {
    if (this.used > 0) {
      this.enqueue(this.batch.subarray(0, this.used));
      this.batch = Buffer.allocUnsafe(batchBytes);
      this.used = 0;
    }
    this.drain();
  }

  /** Called by the timer: the partial batch, and a note on stderr (at most once a minute) of what was dropped. */
  tick(): void {
    this.pass();
    const now = Date.now();
    if (this.droppedBytes > 0 && now - this.droppedReportedAt >= 60_000) {
      this.droppedReportedAt = now;
      try {
        writeSync(2, `tollgate: stdout is not being read; ${this.droppedBytes} bytes of log lines dropped\n`);
      } catch {
        /* stderr gone too */
      }
      this.droppedBytes = 0;
    }
  }

  /** pino's `logger.flush()`: what is batched goes out now, as far as the pipe takes it. */
  flush(callback?: (error?: Error) => void): void {
    this.pass();
    callback?.();
  }

  /** Everything out before the process ends, waiting for a full pipe up to `patienceMs`. */
  flushSync(patienceMs = 2_000): void {
    const deadline = Date.now() + patienceMs;
    this.pass();
    while (this.queue.length > 0 && !this.broken && Date.now() < deadline) {
      Atomics.wait(pause, 0, 0, 5);
      this.drain();
    }
  }

  private enqueue(buffer: Buffer): void {
    if (this.broken) return;
    if (this.queuedBytes + buffer.length > queueLimitBytes) {
      this.droppedBytes += buffer.length;
      return;
    }
    this.queue.push(buffer);
    this.queuedBytes += buffer.length;
  }

  private drain(): void {
    while (this.queue.length > 0) {
      const head = this.queue[0];
      let written: number;
      try {
        written = writeSync(this.fd, head);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') return;
        // EPIPE, EBADF…: stdout is gone for good; logging must not take the gateway down with it.
        this.broken = true;
        this.queue.length = 0;
        this.queuedBytes = 0;
        return;
      }
      this.queuedBytes -= written;
      if (written < head.length) {
        this.queue[0] = head.subarray(written);
        return;
      }
      this.queue.shift();
    }
  }
}

const pause = new Int32Array(new SharedArrayBuffer(4));

function bufferedStdout(): StdoutBatches {
  // Opening process.stdout makes libuv put a pipe or socket on fd 1 in non-blocking mode (files and
  // terminals do not block for long): a full pipe then answers EAGAIN instead of stopping the loop.
  void process.stdout;
  const out = new StdoutBatches(1);
  const timer = setInterval(() => out.tick(), 250);
  timer.unref();
  process.once('exit', () => out.flushSync());
  return out;
}
