/**
 * Child processes of the benchmark: spawned pinned to a core with `taskset` (when it exists),
 * tracked, and killed when the benchmark exits, fails or is interrupted. Also reads CPU time and
 * memory of a process from /proc.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

export const tasksetAvailable = spawnSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' }).status === 0;
const clockTicks = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

export interface BenchProcess {
  name: string;
  child: ChildProcess;
  pid: number;
  /** performance.now() at spawn. */
  spawnedAt: number;
  output(): string;
  /** Resolves with the first match of `pattern` in stdout, and when it appeared (performance.now()). */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<{ match: RegExpExecArray; at: number }>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once exited. */
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<BenchProcess>();

/** Kills every child still running (synchronously: also usable from an 'exit' handler). */
export function killAll(): void {
  for (const entry of running) {
    try { entry.child.kill('SIGKILL'); } catch { /* already gone */ }
  }
  running.clear();
}

let guarded = false;
/** Installs the exit, error and signal handlers that take the children down with the benchmark. */
export function guardChildren(): void {
  if (guarded) return;
  guarded = true;
  process.on('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\nbench: ${signal}, stopping children\n`);
      killAll();
      process.exit(130);
    });
  }
  process.on('uncaughtException', (error) => {
    process.stderr.write(`bench: ${error.stack ?? error}\n`);
    killAll();
    process.exit(1);
  });
}

/** Moves this process (all its threads) to `core`; false when taskset is unavailable. */
export function pinSelf(core: number): boolean {
  if (!tasksetAvailable) return false;
  return spawnSync('taskset', ['-a', '-p', '-c', String(core), String(process.pid)], { stdio: 'ignore' }).status === 0;
}

export interface SpawnOptions {
  name: string;
  /** Core to pin to, or null for no pinning. */
  core: number | null;
  /** Arguments after the node binary (node flags, script, script arguments). */
  args: string[];
  env?: Record<string, string>;
  /** Open an IPC channel (our own scripts; they exit when it closes). */
  ipc?: boolean;
  /** A program that runs node (`valgrind …`): the command line becomes `wrapper… node args…`. */
  wrapper?: string[];
}

/** Output kept: the first 64 KB (the start banner) and a rolling tail, so a chatty child costs little to read. */
class BoundedOutput {
  private head = '';
  private tail = '';
  private dropped = false;

  add(text: string): void {
    if (this.head.length < 65_536) {
      this.head += text;
      return;
    }
    const joined = this.tail + text;
    if (joined.length > 16_384) this.dropped = true;
    this.tail = joined.length > 16_384 ? joined.slice(-16_384) : joined;
  }

  get text(): string {
    return this.head + (this.dropped ? '\n[…]\n' : '') + this.tail;
  }

  get start(): string {
    return this.head;
  }
}

export function spawnProcess(options: SpawnOptions): BenchProcess {
  const pinned = options.core !== null && tasksetAvailable;
  // taskset (and valgrind) exec node in place, so the pid is the node process's.
  const line = [...(options.wrapper ?? []), process.execPath, ...options.args];
  if (pinned) line.unshift('taskset', '-c', String(options.core));
  const [command, ...args] = line;
  const stdio: ('ignore' | 'pipe' | 'ipc')[] = ['ignore', 'pipe', 'pipe'];
  if (options.ipc) stdio.push('ipc');
  const spawnedAt = performance.now();
  const child = spawn(command, args, { env: { ...process.env, ...options.env }, stdio });
  const stdout = new BoundedOutput();
  const stderr = new BoundedOutput();
  child.stdout!.setEncoding('utf8').on('data', (text: string) => stdout.add(text));
  child.stderr!.setEncoding('utf8').on('data', (text: string) => stderr.add(text));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const handle: BenchProcess = {
    name: options.name,
    child,
    pid: child.pid ?? -1,
    spawnedAt,
    output: () => stdout.text + (stderr.text ? `\n[stderr]\n${stderr.text}` : ''),
    waitFor(pattern, timeoutMs) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(stdout.start);
          if (!match) return false;
          cleanup();
          resolve({ match, at: performance.now() });
          return true;
        };
        const onExit = (code: number | null) => { cleanup(); reject(new Error(`${options.name} exited (${code}) before printing ${pattern}:\n${handle.output()}`)); };
        const timer = setTimeout(() => { cleanup(); reject(new Error(`${options.name} did not print ${pattern} within ${timeoutMs} ms:\n${handle.output()}`)); }, timeoutMs);
        const cleanup = () => { clearTimeout(timer); child.stdout!.off('data', check); child.off('exit', onExit); };
        child.stdout!.on('data', check);
        child.once('exit', onExit);
        check();
      });
    },
    async stop(graceMs = 5_000) {
      if (child.exitCode !== null || child.signalCode !== null) { running.delete(handle); return; }
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
      running.delete(handle);
    },
  };
  running.add(handle);
  child.once('exit', () => running.delete(handle));
  return handle;
}

/** User + system CPU time of a process (all threads), in ms; 10 ms resolution on most kernels. */
export function cpuTimeMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name may contain spaces; the fields after it do not.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / clockTicks) * 1000;
}

/**
 * Busy CPU time of the whole machine, all cores, in ms: user, nice, system, irq and softirq (a
 * process's stime includes interrupt work done on its behalf) and steal (a busy VM host).
 */
export function machineCpuMs(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return ((user + nice + system + irq + softirq + (steal || 0)) / clockTicks) * 1000;
}

/** CPU time of this process and every child still running, in ms. */
export function ownCpuMs(): number {
  let total = cpuTimeMs(process.pid);
  for (const entry of running) {
    try { total += cpuTimeMs(entry.pid); } catch { /* exited */ }
  }
  return total;
}

export interface Memory {
  /** Resident set size now, MiB. */
  rssMiB: number;
  /** Peak resident set size since start (VmHWM), MiB. */
  peakMiB: number;
}

export function memory(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) / 1024;
  return { rssMiB: field('VmRSS'), peakMiB: field('VmHWM') };
}
