/**
 * The main matrix: every target (direct, floor, Tollgate) × non-stream/stream × connection counts,
 * closed-loop, with the target's CPU time over each measured window and its peak memory.
 *
 * The machine is shared and its speed drifts over seconds, so the targets are not run one after
 * another: every cell is measured in alternating slices (a round takes one slice of each target,
 * seconds apart) and reported as the median slice. Two whole runs minutes apart differed by up to
 * 2×; interleaved medians agree within about 10%.
 */
import { gcMicrosPerRequest, readGcSeconds, type GcSeconds } from './gc-metrics.js';
import { completionBody, type Gateway } from './gateways.js';
import { runCannon } from './load-cannon.js';
import { benchmarkCpuMs, cpuTimeMs, machineCpuMs, memory } from './proc-readings.js';
import type { LatencySummary } from './stats.js';

/** `json` is a non-stream request. */
export type Mode = 'json' | 'stream';
export const modes: Mode[] = ['json', 'stream'];

/** One measured window of one target. */
export interface Slice {
  target: Gateway['name'];
  mode: Mode;
  connections: number;
  requestsPerSecond: number;
  ok: number;
  failed: number;
  latency: LatencySummary | null;
  /** CPU time of the target process per completed request, µs. */
  cpuMicrosPerRequest: number;
  /** Target CPU time / wall time over the window (1 = its core saturated). */
  cpuUtilisation: number;
  /** CPU used by processes that are not the benchmark's, in cores: other work skews the numbers. */
  foreignCores: number;
  /** Tollgate only: GC time per completed request, µs, from its /metrics (null when unread). */
  gcMicrosPerRequest: { minor: number; major: number } | null;
}

/** A cell: its median slice, with every slice's failures, the worst foreign load and every slice's rate. */
export interface Cell extends Slice {
  /** Every slice's requests/s, in round order. */
  sliceRates: number[];
}

/** One target's cells and memory. */
export interface TargetRun {
  target: Gateway['name'];
  /** Spawn → listening, ms. */
  startupMs: number;
  cells: Cell[];
  /** RSS before any load (after the one check request of each kind), MiB. */
  idleRssMiB: number;
  /** Peak RSS (VmHWM) after all its load, MiB. */
  peakRssMiB: number;
}

/** How long and how wide the matrix runs. */
export interface MatrixOptions {
  connections: number[];
  /** Seconds per cell and target, split into `rounds` slices. */
  durationS: number;
  /** Warm-up before each cell's first slice, s. */
  warmupS: number;
  rounds: number;
  log: (line: string) => void;
}

async function measureSlice(gateway: Gateway, mode: Mode, connections: number, durationS: number, warmupS: number): Promise<Slice> {
  const pid = gateway.process.pid;
  const metricsUrl = gateway.name === 'tollgate' ? new URL('/metrics', gateway.url).href : null;
  let cpuStart = 0;
  let wallStart = 0;
  let machineStart = 0;
  let benchmarkStart = 0;
  let gcStart: Promise<GcSeconds | null> = Promise.resolve(null);
  const result = await runCannon({
    target: { url: gateway.url, headers: gateway.headers },
    bodies: [completionBody(mode === 'stream')],
    connections,
    durationS,
    warmupS,
    recordLatency: true,
    onMeasuring: () => {
      cpuStart = cpuTimeMs(pid);
      wallStart = performance.now();
      machineStart = machineCpuMs();
      benchmarkStart = benchmarkCpuMs();
      if (metricsUrl) gcStart = readGcSeconds(metricsUrl);
    },
  });
  const cpuMs = cpuTimeMs(pid) - cpuStart;
  const wallMs = performance.now() - wallStart;
  const foreignMs = machineCpuMs() - machineStart - (benchmarkCpuMs() - benchmarkStart);
  const gc = metricsUrl ? gcMicrosPerRequest(await gcStart, await readGcSeconds(metricsUrl), result.ok) : null;
  return {
    target: gateway.name,
    mode,
    connections,
    requestsPerSecond: result.requestsPerSecond,
    ok: result.ok,
    failed: result.failed,
    latency: result.latency,
    cpuMicrosPerRequest: result.ok > 0 ? (cpuMs * 1000) / result.ok : NaN,
    cpuUtilisation: cpuMs / wallMs,
    foreignCores: Math.max(0, foreignMs) / wallMs,
    gcMicrosPerRequest: gc,
  };
}

/** Measures every target in alternating slices, after the same unmeasured warm-up for each. */
export async function runMatrix(gateways: Gateway[], options: MatrixOptions): Promise<TargetRun[]> {
  const sliceS = Math.max(0.5, options.durationS / options.rounds);
  const sliceWarmupS = Math.min(options.warmupS, 0.5);
  const idle = gateways.map((gateway) => memory(gateway.process.pid).rssMiB);
  // JIT, lazily loaded tables and pools warm up here, not in the first measured slice.
  const warmS = Math.max(2, 2 * options.warmupS);
  for (const gateway of gateways) {
    for (const mode of modes) await measureSlice(gateway, mode, 16, warmS, 0);
  }
  const cells: Cell[][] = gateways.map(() => []);
  for (const mode of modes) {
    for (const connections of options.connections) {
      const slices: Slice[][] = gateways.map(() => []);
      for (let round = 0; round < options.rounds; round++) {
        for (const [index, gateway] of gateways.entries()) {
          const warmupS = round === 0 ? options.warmupS : sliceWarmupS;
          slices[index].push(await measureSlice(gateway, mode, connections, sliceS, warmupS));
        }
      }
      for (const [index, taken] of slices.entries()) {
        const cell = medianCell(taken);
        cells[index].push(cell);
        logCell(cell, options.log);
      }
    }
  }
  return gateways.map((gateway, index) => ({
    target: gateway.name,
    startupMs: gateway.startupMs,
    cells: cells[index],
    idleRssMiB: idle[index],
    peakRssMiB: memory(gateway.process.pid).peakMiB,
  }));
}

function medianCell(slices: Slice[]): Cell {
  const median = [...slices].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)[Math.floor((slices.length - 1) / 2)];
  return {
    ...median,
    ok: slices.reduce((sum, slice) => sum + slice.ok, 0),
    failed: slices.reduce((sum, slice) => sum + slice.failed, 0),
    foreignCores: Math.max(...slices.map((slice) => slice.foreignCores)),
    sliceRates: slices.map((slice) => slice.requestsPerSecond),
  };
}

function logCell(cell: Cell, log: (line: string) => void): void {
  const ms = (value: number | undefined) => (value === undefined ? '-' : value.toFixed(2));
  const parts = [
    `  ${cell.target.padEnd(8)} ${cell.mode.padEnd(6)} c=${String(cell.connections).padEnd(3)} ${cell.requestsPerSecond.toFixed(0).padStart(7)} req/s`,
    `p50 ${ms(cell.latency?.p50)} ms  p99 ${ms(cell.latency?.p99)} ms`,
    `cpu ${cell.cpuMicrosPerRequest.toFixed(0)} µs/req (${(cell.cpuUtilisation * 100).toFixed(0)}% core)`,
  ];
  if (cell.gcMicrosPerRequest) parts.push(`gc ${cell.gcMicrosPerRequest.minor.toFixed(1)}+${cell.gcMicrosPerRequest.major.toFixed(1)} µs/req (young+full)`);
  if (cell.failed) parts.push(`FAILED ${cell.failed}`);
  if (cell.foreignCores > 0.1) parts.push(`WARNING: other processes used ${cell.foreignCores.toFixed(2)} cores`);
  parts.push(`(median of ${cell.sliceRates.length}; slices ${Math.min(...cell.sliceRates).toFixed(0)}–${Math.max(...cell.sliceRates).toFixed(0)} req/s)`);
  log(parts.join('  '));
}
