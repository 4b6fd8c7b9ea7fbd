/**
 * In cluster mode the primary alone writes to stdout and stderr, passing each worker's output on
 * in whole lines: workers write 64 KiB batches, and a write to a shared pipe larger than PIPE_BUF
 * may be split, cutting a line with another worker's. A slow reader pauses the workers' pipes
 * (their writes queue, then are dropped and counted in the worker), so nothing here grows unbounded.
 */
import type { Readable, Writable } from 'node:stream';

/** A worker's output with no newline for this long is passed on as it is (not one line, then). */
const maxPartialLineBytes = 1024 * 1024;

/** Resolves once the source ended and what it sent was handed to the target. */
export function relayWorkerOutput(source: Readable, target: Writable): Promise<void> {
  let rest: Buffer | null = null;
  const resume = () => source.resume();
  const write = (data: Buffer) => {
    // One drain listener per stall: a source already paused is already waiting for it.
    if (target.write(data) || source.isPaused()) return;
    source.pause();
    target.once('drain', resume);
  };
  source.on('data', (chunk: Buffer) => {
    const lastNewline = chunk.lastIndexOf(10);
    if (lastNewline < 0) {
      rest = rest ? Buffer.concat([rest, chunk]) : Buffer.from(chunk);
      if (rest.length >= maxPartialLineBytes) {
        write(rest);
        rest = null;
      }
      return;
    }
    const lines = chunk.subarray(0, lastNewline + 1);
    write(rest ? Buffer.concat([rest, lines]) : lines);
    rest = lastNewline + 1 < chunk.length ? Buffer.from(chunk.subarray(lastNewline + 1)) : null;
  });
  return new Promise<void>((resolve) => {
    source.once('end', () => {
      if (rest) write(rest);
      rest = null;
      resolve();
    });
    // A worker that dies mid-write closes its end; nothing to report beyond what the primary logs.
    source.once('error', () => resolve());
    source.once('close', () => resolve());
  });
}

/** Exits once the relays ended and the target took everything (at most `patienceMs`). */
export function exitAfterRelays(relays: Iterable<Promise<void>>, targets: Writable[], code: number, patienceMs = 3_000): void {
  setTimeout(() => process.exit(code), patienceMs).unref();
  void Promise.all(relays).then(async () => {
    for (const target of targets) await new Promise<void>((resolve) => target.write('', () => resolve()));
    process.exit(code);
  });
}
