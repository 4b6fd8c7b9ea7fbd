/**
 * The main matrix: one target (direct, floor or Tollgate) × non-stream/stream × connection counts,
 * closed-loop, with the target's CPU time over each measured window and its peak memory.
 */
import { gcMicrosPerRequest, readGcSeconds, type GcSeconds } from './gc-metrics.js';
import { completionBody, type Gateway } from './gateways.js';
import type { LoadClient } from './load-client.js';
import type { CannonResult, TtfbResult } from './load-protocol.js';
import { cpuTimeMs, machineCpuMs, memory, ownCpuMs } from './processes.js';
import type { LatencySummary } from './stats.js';

export type Mode = 'json' | 'stream';

export interface Cell {
  target: Gateway['name'];
  mode: Mode;
  connections: number;
  requestsPerSecond: number;
  ok: number;
  failed: number;
  latency: LatencySummary | null;
  /** CPU time of the target process per completed request, µs. */
  cpuMicrosPerRequest: number;
  /** Target CPU time / wall time over the window (1 = one core saturated). */
  cpuUtilisation: number;
  /** CPU used by processes that are not the benchmark's, in cores (other work on the machine skews the numbers). */
  foreignCores: number;
  /** Tollgate only: GC time per completed request, µs, from its /metrics (null when unread). */
  gcMicrosPerRequest?: { minor: number; major: number } | null;
  /** Interleaved runs: every slice's requests/s, in round order (a round's slices of all targets were taken seconds apart). */
  sliceRates?: number[];
}

export interface TargetRun {
  target: Gateway['name'];
  startupMs: number;
  cells: Cell[];
  /** Streams at `ttfbConnections`, timed on the first body byte. */
  ttfb: TtfbResult | null;
  /** The same at one connection: the first byte without queueing behind other requests. */
  ttfbOne: TtfbResult | null;
  /** RSS before any load (after one request of each kind), MiB. */
  idleRssMiB: number;
  /** Peak RSS (VmHWM) of the target after all its load, MiB. */
  peakRssMiB: number;
  rssMiB: number;
}

export interface MatrixOptions {
  connections: number[];
  durationS: number;
  warmupS: number;
  ttfbConnections: number;
  /** Interleaved runs only: slices per cell and target (see `runInterleaved`). */
  rounds?: number;
  log: (line: string) => void;
}

export const modes: Mode[] = ['json', 'stream'];

/** The gateway's CPU over a load's measured window: `start` when it begins, `stop` when it ends. */
function cpuWindow(pid: number): { start(): void; stop(ok: number): { wallMs: number; cpuMicrosPerRequest: number; cpuUtilisation: number } } {
  let cpuStart = 0;
  let wallStart = 0;
  return {
    start() { cpuStart = cpuTimeMs(pid); wallStart = performance.now(); },
    stop(ok) {
      const cpuMs = cpuTimeMs(pid) - cpuStart;
      const wallMs = performance.now() - wallStart;
      return { wallMs, cpuMicrosPerRequest: ok > 0 ? (cpuMs * 1000) / ok : NaN, cpuUtilisation: cpuMs / wallMs };
    },
  };
}

export async function measureCell(load: LoadClient, gateway: Gateway, mode: Mode, connections: number, options: MatrixOptions, quiet = false): Promise<Cell> {
  const cpu = cpuWindow(gateway.process.pid);
  let machineStart = 0;
  let ownStart = 0;
  const metricsUrl = gateway.name === 'tollgate' ? new URL('/metrics', gateway.url).href : null;
  let gcStart: Promise<GcSeconds | null> = Promise.resolve(null);
  const result = await load.run<CannonResult>({
    kind: 'cannon',
    target: { url: gateway.url, headers: gateway.headers },
    bodies: [completionBody(mode === 'stream')],
    connections,
    durationS: options.durationS,
    warmupS: options.warmupS,
    recordLatency: true,
  }, (options.durationS + options.warmupS + 60) * 1000, {
    onMeasuring: () => {
      cpu.start(); machineStart = machineCpuMs(); ownStart = ownCpuMs();
      if (metricsUrl) gcStart = readGcSeconds(metricsUrl);
    },
  });
  const { wallMs, cpuMicrosPerRequest, cpuUtilisation } = cpu.stop(result.ok);
  const foreignCores = Math.max(0, (machineCpuMs() - machineStart) - (ownCpuMs() - ownStart)) / wallMs;
  const failed = result.non2xx + result.errors + result.timeouts;
  const gc = metricsUrl ? gcMicrosPerRequest(await gcStart, await readGcSeconds(metricsUrl), result.ok) : undefined;
  const cell: Cell = {
    target: gateway.name,
    mode,
    connections,
    requestsPerSecond: result.requestsPerSecond,
    ok: result.ok,
    failed,
    latency: result.latency,
    cpuMicrosPerRequest,
    cpuUtilisation,
    foreignCores,
    gcMicrosPerRequest: gc,
  };
  if (!quiet) logCell(cell, options.log);
  return cell;
}

function logCell(cell: Cell, log: (line: string) => void, note = ''): void {
  log(`  ${cell.target.padEnd(8)} ${cell.mode.padEnd(6)} c=${String(cell.connections).padEnd(3)} ${cell.requestsPerSecond.toFixed(0).padStart(7)} req/s  p50 ${fmt(cell.latency?.p50)} ms  p99 ${fmt(cell.latency?.p99)} ms  cpu ${cell.cpuMicrosPerRequest.toFixed(0)} µs/req (${(cell.cpuUtilisation * 100).toFixed(0)}% core)${cell.gcMicrosPerRequest ? `  gc ${cell.gcMicrosPerRequest.minor.toFixed(1)}+${cell.gcMicrosPerRequest.major.toFixed(1)} µs/req (young+full)` : ''}${cell.failed ? `  FAILED ${cell.failed}` : ''}${cell.foreignCores > 0.1 ? `  WARNING: other processes used ${cell.foreignCores.toFixed(2)} cores` : ''}${note}`);
}

const fmt = (value: number | undefined) => (value === undefined ? '-' : value.toFixed(2));

export async function runTarget(load: LoadClient, gateway: Gateway, options: MatrixOptions): Promise<TargetRun> {
  const idleRssMiB = memory(gateway.process.pid).rssMiB;
  const cells: Cell[] = [];
  for (const mode of modes) {
    for (const connections of options.connections) cells.push(await measureCell(load, gateway, mode, connections, options));
  }
  const ttfb = await measureTtfb(load, gateway, options.durationS, options.warmupS, options.ttfbConnections);
  logTtfb(gateway, ttfb, options.ttfbConnections, options.log);
  const ttfbOne = await measureTtfb(load, gateway, options.durationS, options.warmupS, 1);
  logTtfb(gateway, ttfbOne, 1, options.log);
  const mem = memory(gateway.process.pid);
  return { target: gateway.name, startupMs: gateway.startupMs, cells, ttfb, ttfbOne, idleRssMiB, peakRssMiB: mem.peakMiB, rssMiB: mem.rssMiB };
}

/**
 * Several targets (the floor and Tollgate), all started, measured in alternating slices: each cell
 * is `rounds` short runs per target, taken in turn, and reported as the median slice. The machine
 * is shared and its speed drifts over seconds; slices a few seconds apart see the same machine,
 * so the ratios between targets hold where back-to-back whole runs did not (measured: two
 * sequential runs minutes apart differed by up to 2x, interleaved medians by about 10%).
 */
export async function runInterleaved(load: LoadClient, gateways: Gateway[], options: MatrixOptions): Promise<TargetRun[]> {
  const rounds = Math.max(1, options.rounds ?? 3);
  const sliceS = Math.max(0.5, options.durationS / rounds);
  const sliceWarmupS = Math.min(options.warmupS, 0.5);
  const idle = gateways.map((gateway) => memory(gateway.process.pid).rssMiB);
  // Every target gets the same unmeasured warm-up (JIT, lazily loaded tables, pools) before any slice.
  const warmS = Math.max(2, 2 * options.warmupS);
  for (const gateway of gateways) {
    for (const mode of modes) await measureCell(load, gateway, mode, 16, { ...options, durationS: warmS, warmupS: 0 }, true);
  }
  const cells: Cell[][] = gateways.map(() => []);
  for (const mode of modes) {
    for (const connections of options.connections) {
      const slices: Cell[][] = gateways.map(() => []);
      for (let round = 0; round < rounds; round++) {
        for (const [index, gateway] of gateways.entries()) {
          const warmupS = round === 0 ? options.warmupS : sliceWarmupS;
          slices[index].push(await measureCell(load, gateway, mode, connections, { ...options, durationS: sliceS, warmupS }, true));
        }
      }
      for (const [index, taken] of slices.entries()) {
        const cell = medianCell(taken);
        cells[index].push(cell);
        const rates = cell.sliceRates ?? [];
        logCell(cell, options.log, `  (median of ${rounds}; slices ${Math.min(...rates).toFixed(0)}–${Math.max(...rates).toFixed(0)} req/s)`);
      }
    }
  }
  const ttfbs: TtfbResult[][] = gateways.map(() => []);
  const ttfbsOne: TtfbResult[][] = gateways.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (const [index, gateway] of gateways.entries()) {
      const warmupS = round === 0 ? options.warmupS : sliceWarmupS;
      ttfbs[index].push(await measureTtfb(load, gateway, sliceS, warmupS, options.ttfbConnections));
      ttfbsOne[index].push(await measureTtfb(load, gateway, sliceS, warmupS, 1));
    }
  }
  return gateways.map((gateway, index) => {
    const ttfb = medianBy(ttfbs[index], (result) => result.ttfb?.p50 ?? Infinity);
    logTtfb(gateway, ttfb, options.ttfbConnections, options.log);
    const ttfbOne = medianBy(ttfbsOne[index], (result) => result.ttfb?.p50 ?? Infinity);
    logTtfb(gateway, ttfbOne, 1, options.log);
    const mem = memory(gateway.process.pid);
    return { target: gateway.name, startupMs: gateway.startupMs, cells: cells[index], ttfb, ttfbOne, idleRssMiB: idle[index], peakRssMiB: mem.peakMiB, rssMiB: mem.rssMiB };
  });
}

/** The slice with the median throughput, with every slice's failures and the worst foreign load. */
function medianCell(slices: Cell[]): Cell {
  const median = medianBy(slices, (cell) => cell.requestsPerSecond);
  return {
    ...median,
    ok: slices.reduce((sum, cell) => sum + cell.ok, 0),
    failed: slices.reduce((sum, cell) => sum + cell.failed, 0),
    foreignCores: Math.max(...slices.map((cell) => cell.foreignCores)),
    sliceRates: slices.map((cell) => cell.requestsPerSecond),
  };
}

function medianBy<T>(items: T[], key: (item: T) => number): T {
  const sorted = [...items].sort((a, b) => key(a) - key(b));
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

export async function measureTtfb(load: LoadClient, gateway: Gateway, durationS: number, warmupS: number, connections: number): Promise<TtfbResult> {
  const cpu = cpuWindow(gateway.process.pid);
  const result = await load.run<TtfbResult>({
    kind: 'ttfb',
    target: { url: gateway.url, headers: gateway.headers },
    body: completionBody(true),
    connections,
    durationS,
    warmupS,
  }, (durationS + warmupS + 60) * 1000, { onMeasuring: () => cpu.start() });
  const { cpuMicrosPerRequest, cpuUtilisation } = cpu.stop(result.ok);
  return { ...result, cpuMicrosPerRequest, cpuUtilisation };
}

function logTtfb(gateway: Gateway, ttfb: TtfbResult, connections: number, log: (line: string) => void): void {
  log(`  ${gateway.name.padEnd(8)} ttfb   c=${String(connections).padEnd(3)} ${ttfb.requestsPerSecond.toFixed(0).padStart(7)} req/s  first byte p50 ${fmt(ttfb.ttfb?.p50)} ms  p99 ${fmt(ttfb.ttfb?.p99)} ms  cpu ${ttfb.cpuMicrosPerRequest?.toFixed(0) ?? '-'} µs/req (${((ttfb.cpuUtilisation ?? NaN) * 100).toFixed(0)}% core)${ttfb.failed ? `  FAILED ${ttfb.failed}` : ''}`);
}
