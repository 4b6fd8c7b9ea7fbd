/** CPU time and memory of processes and of the whole machine, read from /proc (Linux). */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { runningPids } from './processes.js';

const clockTicks = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** User + system CPU time of a process (all threads), ms; 10 ms resolution on most kernels. */
export function cpuTimeMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name may contain spaces; the fields after it do not.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / clockTicks) * 1000;
}

/**
 * Busy CPU time of the whole machine, all cores, ms: user, nice, system, irq and softirq (a
 * process's system time includes interrupt work done for it) and steal (a busy VM host).
 */
export function machineCpuMs(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return ((user + nice + system + irq + softirq + (steal || 0)) / clockTicks) * 1000;
}

/** CPU time of the benchmark and every child still running, ms. */
export function benchmarkCpuMs(): number {
  let total = cpuTimeMs(process.pid);
  for (const pid of runningPids()) {
    try {
      total += cpuTimeMs(pid);
    } catch {
      // It exited between the listing and the read.
    }
  }
  return total;
}

/** Memory of one process, MiB. */
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
