/**
 * The benchmark's child processes: spawned pinned to a core with `taskset` when it exists,
 * tracked, and killed when the benchmark exits, fails or is interrupted.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';

export const tasksetAvailable = spawnSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' }).status === 0;

/** A child process of the benchmark. */
export interface BenchProcess {
  name: string;
  pid: number;
  /** Resolves with the first match of `pattern` in the start of stdout, and how long after the spawn it appeared. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<{ match: RegExpExecArray; afterMs: number }>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once exited. */
  stop(graceMs?: number): Promise<void>;
}

export interface SpawnOptions {
  name: string;
  /** Core to pin to, or null for no pinning. */
  core: number | null;
  /** Arguments after the node binary (node flags, script, script arguments). */
  args: string[];
  env?: Record<string, string>;
  /** Open an IPC channel (our own scripts exit when it closes). */
  ipc?: boolean;
}

const running = new Set<ChildProcess>();

/** The pids of the children still running. */
export function runningPids(): number[] {
  return [...running].flatMap((child) => (child.pid === undefined ? [] : [child.pid]));
}

/** Kills every child still running, synchronously, so an 'exit' handler can use it. */
export function killAll(): void {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
}

/** Takes the children down with the benchmark when it exits (an uncaught error included) or is interrupted. */
export function guardChildren(): void {
  process.on('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\nbench: ${signal}, stopping children\n`);
      killAll();
      process.exit(130);
    });
  }
}

/** Moves this process (all its threads) to `core`; false when taskset is unavailable. */
export function pinSelf(core: number): boolean {
  if (!tasksetAvailable) return false;
  return spawnSync('taskset', ['-a', '-p', '-c', String(core), String(process.pid)], { stdio: 'ignore' }).status === 0;
}

/** A gateway logs a line a request: keep the first 64 KiB (its start banner) and the last 16 KiB. */
class KeptOutput {
  start = '';
  private latest = '';

  add(text: string): void {
    if (this.start.length < 65_536) this.start += text;
    else this.latest = (this.latest + text).slice(-16_384);
  }

  get text(): string {
    return this.latest ? `${this.start}\n[…]\n${this.latest}` : this.start;
  }
}

export function spawnProcess(options: SpawnOptions): BenchProcess {
  // taskset execs node in place, so the pid is the node process's.
  const line = [process.execPath, ...options.args];
  if (options.core !== null && tasksetAvailable) line.unshift('taskset', '-c', String(options.core));
  const [command, ...args] = line;
  const spawnedAt = performance.now();
  const child = spawn(command, args, {
    env: { ...process.env, ...options.env },
    stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  const stdout = new KeptOutput();
  const stderr = new KeptOutput();
  child.stdout?.setEncoding('utf8').on('data', (text: string) => stdout.add(text));
  child.stderr?.setEncoding('utf8').on('data', (text: string) => stderr.add(text));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const output = () => stdout.text + (stderr.text ? `\n[stderr]\n${stderr.text}` : '');
  running.add(child);
  child.once('exit', () => running.delete(child));
  return {
    name: options.name,
    pid: child.pid ?? -1,
    waitFor(pattern, timeoutMs) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(stdout.start);
          if (!match) return;
          cleanup();
          resolve({ match, afterMs: performance.now() - spawnedAt });
        };
        const onExit = (code: number | null) => {
          cleanup();
          reject(new Error(`${options.name} exited (${code}) before printing ${pattern}:\n${output()}`));
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`${options.name} did not print ${pattern} within ${timeoutMs} ms:\n${output()}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          child.stdout?.off('data', check);
          child.off('exit', onExit);
        };
        child.stdout?.on('data', check);
        child.once('exit', onExit);
        check();
      });
    },
    async stop(graceMs = 5_000) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      running.delete(child);
    },
  };
}
