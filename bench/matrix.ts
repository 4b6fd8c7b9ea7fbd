/**
 * The main matrix: one target (direct, floor or Tollgate) × non-stream/stream × connection counts,
 * closed-loop, with the target's CPU time over each measured window and its peak memory.
 */
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
}

export interface TargetRun {
  target: Gateway['name'];
  startupMs: number;
  cells: Cell[];
  /** Streams at `ttfbConnections`, timed on the first body byte. */
  ttfb: TtfbResult | null;
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
  log: (line: string) => void;
}

export const modes: Mode[] = ['json', 'stream'];

async function measureCell(load: LoadClient, gateway: Gateway, mode: Mode, connections: number, options: MatrixOptions): Promise<Cell> {
  const pid = gateway.process.pid;
  let cpuStart = 0;
  let wallStart = 0;
  let machineStart = 0;
  let ownStart = 0;
  const result = await load.run<CannonResult>({
    kind: 'cannon',
    target: { url: gateway.url, headers: gateway.headers },
    bodies: [completionBody(mode === 'stream')],
    connections,
    durationS: options.durationS,
    warmupS: options.warmupS,
    recordLatency: true,
  }, (options.durationS + options.warmupS + 60) * 1000, {
    onMeasuring: () => { cpuStart = cpuTimeMs(pid); wallStart = performance.now(); machineStart = machineCpuMs(); ownStart = ownCpuMs(); },
  });
  const cpuMs = cpuTimeMs(pid) - cpuStart;
  const wallMs = performance.now() - wallStart;
  const foreignCores = Math.max(0, (machineCpuMs() - machineStart) - (ownCpuMs() - ownStart)) / wallMs;
  const failed = result.non2xx + result.errors + result.timeouts;
  const cell: Cell = {
    target: gateway.name,
    mode,
    connections,
    requestsPerSecond: result.requestsPerSecond,
    ok: result.ok,
    failed,
    latency: result.latency,
    cpuMicrosPerRequest: result.ok > 0 ? (cpuMs * 1000) / result.ok : NaN,
    cpuUtilisation: cpuMs / wallMs,
    foreignCores,
  };
  options.log(`  ${gateway.name.padEnd(8)} ${mode.padEnd(6)} c=${String(connections).padEnd(3)} ${cell.requestsPerSecond.toFixed(0).padStart(7)} req/s  p50 ${fmt(cell.latency?.p50)} ms  p99 ${fmt(cell.latency?.p99)} ms  cpu ${cell.cpuMicrosPerRequest.toFixed(0)} µs/req (${(cell.cpuUtilisation * 100).toFixed(0)}% core)${failed ? `  FAILED ${failed}` : ''}${foreignCores > 0.1 ? `  WARNING: other processes used ${foreignCores.toFixed(2)} cores` : ''}`);
  return cell;
}

const fmt = (value: number | undefined) => (value === undefined ? '-' : value.toFixed(2));

export async function runTarget(load: LoadClient, gateway: Gateway, options: MatrixOptions): Promise<TargetRun> {
  const idleRssMiB = memory(gateway.process.pid).rssMiB;
  const cells: Cell[] = [];
  for (const mode of modes) {
    for (const connections of options.connections) cells.push(await measureCell(load, gateway, mode, connections, options));
  }
  const ttfb = await load.run<TtfbResult>({
    kind: 'ttfb',
    target: { url: gateway.url, headers: gateway.headers },
    body: completionBody(true),
    connections: options.ttfbConnections,
    durationS: options.durationS,
    warmupS: options.warmupS,
  }, (options.durationS + options.warmupS + 60) * 1000);
  options.log(`  ${gateway.name.padEnd(8)} ttfb   c=${String(options.ttfbConnections).padEnd(3)} ${ttfb.requestsPerSecond.toFixed(0).padStart(7)} req/s  first byte p50 ${fmt(ttfb.ttfb?.p50)} ms  p99 ${fmt(ttfb.ttfb?.p99)} ms${ttfb.failed ? `  FAILED ${ttfb.failed}` : ''}`);
  const mem = memory(gateway.process.pid);
  return { target: gateway.name, startupMs: gateway.startupMs, cells, ttfb, idleRssMiB, peakRssMiB: mem.peakMiB, rssMiB: mem.rssMiB };
}
