/**
 * Log lines on stdout: every line arrives, in order, even when the process exits right after
 * logging and the reader is slow; a stdout nobody reads never stalls the process (lines are
 * dropped, and stderr says so).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, test } from 'node:test';

const loggerModule = new URL('../src/observability/logger.js', import.meta.url).href;

/** A child that logs `lines` lines (padded to `lineBytes`), then keeps a timer ticking for `aliveMs` and exits. */
function logChild(lines: number, lineBytes: number, aliveMs: number) {
  const script = `
    const { createLogger } = await import(${JSON.stringify(loggerModule)});
    const logger = createLogger('info');
    const pad = 'x'.repeat(${lineBytes});
    for (let i = 0; i < ${lines}; i++) logger.info({ i, pad }, 'line');
    let ticks = 0;
    const timer = setInterval(() => { ticks++; }, 10);
    setTimeout(() => { clearInterval(timer); process.stderr.write('ticks ' + ticks + '\\n'); process.exit(0); }, ${aliveMs});
  `;
  return spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
}

function collect(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    stream.on('data', (part: Buffer) => parts.push(part));
    stream.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
  });
}

describe('logging to stdout', () => {
  test('30,000 lines logged just before exit all arrive, in order, through a slow reader', async () => {
    const child = logChild(30_000, 40, 0);
    child.stdout!.pause();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const [out] = await Promise.all([collect(child.stdout!.resume()), new Promise((resolve) => child.once('exit', resolve))]);
    const numbers = out
      .trimEnd()
      .split('\n')
      .map((line) => (JSON.parse(line) as { i: number }).i);
    assert.equal(numbers.length, 30_000);
    assert.ok(
      numbers.every((value, index) => value === index),
      'lines out of order',
    );
  });

  test('a stdout nobody reads does not stall the event loop; dropped lines are reported on stderr', async () => {
    // 30 MB of lines into a pipe that holds 64 KiB and is never read.
    const child = logChild(30_000, 1_000, 700);
    const stderr = collect(child.stderr!);
    const started = Date.now();
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    const elapsed = Date.now() - started;
    const text = await stderr;
    child.stdout!.destroy();
    assert.equal(code, 0);
    // Timers kept firing while stdout was full (a blocked loop would count none).
    const ticks = Number(/ticks (\d+)/.exec(text)?.[1] ?? 0);
    assert.ok(ticks >= 20, `the event loop stalled: ${ticks} ticks in 700 ms\n${text}`);
    assert.match(text, /stdout is not being read; \d+ bytes of log lines dropped/);
    // The exit waits at most ~2 s for the pipe, then goes.
    assert.ok(elapsed < 15_000, `took ${elapsed} ms`);
  });
});
