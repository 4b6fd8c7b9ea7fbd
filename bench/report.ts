/** Turns the measurements into the comparison table, the Tollgate/floor ratios and the printed report. */
import type { Verdict } from './guards.js';
import type { LedgerRateResult } from './ledger-rate.js';
import { modes, type Cell, type Mode, type TargetRun } from './matrix.js';
import type { SlowStreamsResult } from './slow-streams.js';
import type { SoakResult } from './soak.js';

/** One cell across the three targets. */
export interface Comparison {
  mode: Mode;
  connections: number;
  direct: Cell | null;
  floor: Cell | null;
  /** The floor's work on Tollgate's HTTP stack; null unless `--targets` named `stack`. */
  stack: Cell | null;
  tollgate: Cell | null;
  /** Tollgate requests/s over the floor's. */
  throughputRatio: number;
  /**
   * The lowest and highest Tollgate/floor ratio of one round's two slices, taken seconds apart:
   * how far the machine's drift could move the ratio. Null with a single round.
   */
  roundRatios: { min: number; max: number } | null;
  /** Latency added over direct, ms. */
  floorAdded: { p50: number; p99: number };
  stackAdded: { p50: number; p99: number };
  tollgateAdded: { p50: number; p99: number };
  /** Tollgate CPU per request over the floor's. */
  cpuRatio: number;
}

/** Everything a run measured, as printed and as written to the results file. */
export interface Results {
  runs: TargetRun[];
  comparisons: Comparison[];
  verdicts: Verdict[];
  slow: SlowStreamsResult | null;
  soak: SoakResult | null;
  ledger: LedgerRateResult | null;
}

const difference = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? NaN : a - b);

export function compare(runs: TargetRun[], connections: number[]): Comparison[] {
  const cellOf = (target: string, mode: Mode, count: number) =>
    runs.find((run) => run.target === target)?.cells.find((cell) => cell.mode === mode && cell.connections === count) ?? null;
  return modes.flatMap((mode) =>
    connections.map((count) => {
      const direct = cellOf('direct', mode, count);
      const floor = cellOf('floor', mode, count);
      const stack = cellOf('stack', mode, count);
      const tollgate = cellOf('tollgate', mode, count);
      const added = (cell: Cell | null) => ({
        p50: difference(cell?.latency?.p50, direct?.latency?.p50),
        p99: difference(cell?.latency?.p99, direct?.latency?.p99),
      });
      return {
        mode,
        connections: count,
        direct,
        floor,
        stack,
        tollgate,
        throughputRatio: tollgate && floor ? tollgate.requestsPerSecond / floor.requestsPerSecond : NaN,
        roundRatios: roundRatios(floor, tollgate),
        floorAdded: added(floor),
        stackAdded: added(stack),
        tollgateAdded: added(tollgate),
        cpuRatio: tollgate && floor ? tollgate.cpuMicrosPerRequest / floor.cpuMicrosPerRequest : NaN,
      };
    }),
  );
}

function roundRatios(floor: Cell | null, tollgate: Cell | null): { min: number; max: number } | null {
  if (!floor || !tollgate || floor.sliceRates.length < 2) return null;
  const ratios = tollgate.sliceRates.map((rate, round) => rate / floor.sliceRates[round]);
  return { min: Math.min(...ratios), max: Math.max(...ratios) };
}

const n = (value: number | null | undefined, digits = 2) => (value === null || value === undefined || !Number.isFinite(value) ? '-' : value.toFixed(digits));

function table(rows: string[][]): string {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  const lines = rows.map((row) => row.map((cell, column) => (column < 2 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join('  '));
  lines.splice(1, 0, widths.map((width) => '-'.repeat(width)).join('  '));
  return lines.join('\n');
}

function comparisonTable(comparisons: Comparison[]): string {
  const rows = [
    ['mode', 'conns', 'direct r/s', 'floor r/s', 'tollgate r/s', 'T/F', 'p50 d/f/t ms', 'p99 d/f/t ms', '+p50 f/t', '+p99 f/t', 'cpu µs f/t', 'T/F cpu'],
  ];
  for (const c of comparisons) {
    rows.push([
      c.mode,
      String(c.connections),
      n(c.direct?.requestsPerSecond, 0),
      n(c.floor?.requestsPerSecond, 0),
      n(c.tollgate?.requestsPerSecond, 0),
      `${n(c.throughputRatio)}×`,
      `${n(c.direct?.latency?.p50)}/${n(c.floor?.latency?.p50)}/${n(c.tollgate?.latency?.p50)}`,
      `${n(c.direct?.latency?.p99)}/${n(c.floor?.latency?.p99)}/${n(c.tollgate?.latency?.p99)}`,
      `${n(c.floorAdded.p50)}/${n(c.tollgateAdded.p50)}`,
      `${n(c.floorAdded.p99)}/${n(c.tollgateAdded.p99)}`,
      `${n(c.floor?.cpuMicrosPerRequest, 0)}/${n(c.tollgate?.cpuMicrosPerRequest, 0)}`,
      `${n(c.cpuRatio)}×`,
    ]);
  }
  return table(rows);
}

/** The stack floor beside the floor and Tollgate: what the HTTP stack costs, and what the product adds on it. */
function stackTable(comparisons: Comparison[]): string {
  const rows = [['mode', 'conns', 'stack r/s', 'S/F', 'T/S', 'cpu µs f/s/t', '+p50 f/s/t ms', '+p99 f/s/t ms']];
  for (const c of comparisons) {
    if (!c.stack) continue;
    const per = (field: 'p50' | 'p99') => `${n(c.floorAdded[field])}/${n(c.stackAdded[field])}/${n(c.tollgateAdded[field])}`;
    rows.push([
      c.mode,
      String(c.connections),
      n(c.stack.requestsPerSecond, 0),
      `${n(c.floor ? c.stack.requestsPerSecond / c.floor.requestsPerSecond : NaN)}×`,
      `${n(c.tollgate ? c.tollgate.requestsPerSecond / c.stack.requestsPerSecond : NaN)}×`,
      `${n(c.floor?.cpuMicrosPerRequest, 0)}/${n(c.stack.cpuMicrosPerRequest, 0)}/${n(c.tollgate?.cpuMicrosPerRequest, 0)}`,
      per('p50'),
      per('p99'),
    ]);
  }
  return table(rows);
}

export function formatReport(results: Results): string {
  const { runs } = results;
  const out = [comparisonTable(results.comparisons)];
  if (results.comparisons.some((c) => c.stack)) out.push(`\nThe floor's work on Tollgate's HTTP stack (stack-floor.ts):\n${stackTable(results.comparisons)}`);
  const utilisation = runs.map((run) => `${run.target} ${run.cells.map((cell) => `${(cell.cpuUtilisation * 100).toFixed(0)}%`).join('/')}`).join('; ');
  out.push(`\nTarget CPU use per cell (100% = its core saturated; below that the load side limits): ${utilisation}`);
  const foreign = Math.max(0, ...runs.flatMap((run) => run.cells.map((cell) => cell.foreignCores)));
  out.push(
    foreign > 0.1
      ? `WARNING: other processes on this machine used up to ${foreign.toFixed(2)} cores during a measured slice; rerun on a quiet machine before trusting ratios`
      : `Machine quiet: other processes used at most ${foreign.toFixed(2)} cores during any measured slice`,
  );
  out.push(
    `RSS before load → peak (VmHWM) after all load: ${runs.map((run) => `${run.target} ${n(run.idleRssMiB, 1)} → ${n(run.peakRssMiB, 1)} MiB`).join(', ')}`,
  );
  const tollgate = runs.find((run) => run.target === 'tollgate');
  if (tollgate) {
    out.push(`Tollgate startup (spawn → listening): ${n(tollgate.startupMs, 0)} ms`);
    const gc = tollgate.cells.flatMap((cell) =>
      cell.gcMicrosPerRequest ? [`${cell.mode} c=${cell.connections} ${n(cell.gcMicrosPerRequest.minor, 1)}+${n(cell.gcMicrosPerRequest.major, 1)}`] : [],
    );
    if (gc.length > 0) out.push(`Tollgate GC per request, young+full µs (from its /metrics): ${gc.join(', ')}`);
  }
  const { slow, soak, ledger } = results;
  if (slow) {
    out.push(
      `Slow streams: ${slow.opened}/${slow.requested} open (${n(slow.openMs, 0)} ms to open all), RSS ${n(slow.rssBeforeMiB, 1)} → ${n(slow.rssOpenMiB, 1)} MiB = ${n(slow.perStreamKiB, 1)} KiB/stream, ${n(slow.rssAfterMiB, 1)} MiB after`,
    );
  }
  if (soak) {
    out.push(
      `Soak ${soak.minutes} min (16 conns, alternating non-stream/stream): ${soak.requests} requests, ${soak.failed} failed, RSS ${n(soak.rssStartMiB, 1)} → ${n(soak.rssEndMiB, 1)} MiB (max ${n(soak.rssMaxMiB, 1)}, slope ${n(soak.slopeMiBPerMinute)} MiB/min)`,
    );
  }
  if (ledger) {
    out.push(
      `Ledger (SQLite, sequential awaited inserts): ${ledger.records} in ${n(ledger.seconds)} s = ${n(ledger.perSecond, 0)}/s, p50 ${n(ledger.p50Ms * 1000, 0)} µs, p99 ${n(ledger.p99Ms * 1000, 0)} µs`,
    );
  }
  const failed =
    runs.reduce((sum, run) => sum + run.cells.reduce((cells, cell) => cells + cell.failed, 0), 0) +
    (soak?.failed ?? 0) +
    (slow ? slow.requested - slow.opened : 0);
  out.push(failed > 0 ? `WARNING: ${failed} requests failed (see FAILED above); the figures are not comparable` : 'No request failed.');
  out.push('\nGuards:');
  for (const verdict of results.verdicts) {
    out.push(`  ${verdict.pass === null ? 'n/a ' : verdict.pass ? 'PASS' : 'FAIL'}  ${verdict.guard}: ${verdict.measured}`);
  }
  return out.join('\n');
}
