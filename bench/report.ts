/** Turns measurements into the comparison table, Tollgate/floor ratios and verdicts per target. */
import type { SlowStreamsResult, SoakResult, TokensReport } from './extras.js';
import type { LedgerRateResult } from './ledger-rate.js';
import { modes, type Cell, type Mode, type TargetRun } from './matrix.js';

export interface Comparison {
  mode: Mode;
  connections: number;
  direct: Cell | null;
  floor: Cell | null;
  tollgate: Cell | null;
  /** Tollgate requests/s over the floor's. */
  throughputRatio: number;
  /**
   * The lowest and highest Tollgate/floor ratio of one round's two slices (taken seconds apart), or
   * null without interleaved slices: how far the machine's drift could move the ratio.
   */
  roundRatios: { min: number; max: number } | null;
  /** Latency added over direct, ms. */
  floorAdded: { p50: number; p99: number };
  tollgateAdded: { p50: number; p99: number };
  /** Tollgate CPU per request over the floor's. */
  cpuRatio: number;
}

export interface Verdict {
  target: string;
  measured: string;
  pass: boolean | null;
}

export interface Report {
  comparisons: Comparison[];
  ttfb: { direct: number | null; floor: number | null; tollgate: number | null; floorP99: number | null; tollgateP99: number | null; addedOverFloorP50: number; addedOverFloorP99: number };
  /** First byte at one connection (no queueing): p50 per target and Tollgate over the floor. */
  ttfbOne: { direct: number | null; floor: number | null; tollgate: number | null; addedOverFloorP50: number };
  verdicts: Verdict[];
}

const cellOf = (runs: TargetRun[], target: string, mode: Mode, connections: number) =>
  runs.find((run) => run.target === target)?.cells.find((cell) => cell.mode === mode && cell.connections === connections) ?? null;
const diff = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? NaN : a - b);

export function compare(runs: TargetRun[], connections: number[]): Report {
  const comparisons: Comparison[] = [];
  for (const mode of modes) {
    for (const count of connections) {
      const direct = cellOf(runs, 'direct', mode, count);
      const floor = cellOf(runs, 'floor', mode, count);
      const tollgate = cellOf(runs, 'tollgate', mode, count);
      comparisons.push({
        mode, connections: count, direct, floor, tollgate,
        throughputRatio: tollgate && floor ? tollgate.requestsPerSecond / floor.requestsPerSecond : NaN,
        roundRatios: roundRatios(floor, tollgate),
        floorAdded: { p50: diff(floor?.latency?.p50, direct?.latency?.p50), p99: diff(floor?.latency?.p99, direct?.latency?.p99) },
        tollgateAdded: { p50: diff(tollgate?.latency?.p50, direct?.latency?.p50), p99: diff(tollgate?.latency?.p99, direct?.latency?.p99) },
        cpuRatio: tollgate && floor ? tollgate.cpuMicrosPerRequest / floor.cpuMicrosPerRequest : NaN,
      });
    }
  }
  const ttfbOf = (target: string) => runs.find((run) => run.target === target)?.ttfb?.ttfb ?? null;
  const ttfb = {
    direct: ttfbOf('direct')?.p50 ?? null,
    floor: ttfbOf('floor')?.p50 ?? null,
    tollgate: ttfbOf('tollgate')?.p50 ?? null,
    floorP99: ttfbOf('floor')?.p99 ?? null,
    tollgateP99: ttfbOf('tollgate')?.p99 ?? null,
    addedOverFloorP50: diff(ttfbOf('tollgate')?.p50, ttfbOf('floor')?.p50),
    addedOverFloorP99: diff(ttfbOf('tollgate')?.p99, ttfbOf('floor')?.p99),
  };
  const ttfbOneOf = (target: string) => runs.find((run) => run.target === target)?.ttfbOne?.ttfb ?? null;
  const ttfbOne = {
    direct: ttfbOneOf('direct')?.p50 ?? null,
    floor: ttfbOneOf('floor')?.p50 ?? null,
    tollgate: ttfbOneOf('tollgate')?.p50 ?? null,
    addedOverFloorP50: diff(ttfbOneOf('tollgate')?.p50, ttfbOneOf('floor')?.p50),
  };
  return { comparisons, ttfb, ttfbOne, verdicts: [] };
}

/** Tollgate/floor per round, from the slices each round took of both (see `runInterleaved`). */
function roundRatios(floor: Cell | null, tollgate: Cell | null): { min: number; max: number } | null {
  const floorRates = floor?.sliceRates;
  const tollgateRates = tollgate?.sliceRates;
  if (!floorRates || !tollgateRates || floorRates.length !== tollgateRates.length || floorRates.length < 2) return null;
  const ratios = tollgateRates.map((rate, round) => rate / floorRates[round]);
  return { min: Math.min(...ratios), max: Math.max(...ratios) };
}

const check = (value: number, pass: (value: number) => boolean): boolean | null => (Number.isFinite(value) ? pass(value) : null);

export function verdicts(report: Report, runs: TargetRun[], extras: { slow: SlowStreamsResult | null; soak: SoakResult | null }): Verdict[] {
  const result: Verdict[] = [];
  for (const comparison of report.comparisons) {
    if (comparison.connections !== 16 && comparison.connections !== 64) continue;
    result.push({
      target: `throughput ${comparison.mode} c=${comparison.connections} ≥ 0.8× floor`,
      measured: `${comparison.throughputRatio.toFixed(2)}×${comparison.roundRatios ? ` (rounds ${comparison.roundRatios.min.toFixed(2)}–${comparison.roundRatios.max.toFixed(2)}×)` : ''}`,
      pass: check(comparison.throughputRatio, (ratio) => ratio >= 0.8),
    });
  }
  for (const comparison of report.comparisons.filter((entry) => entry.connections === 16)) {
    const added = comparison.tollgateAdded;
    result.push({ target: `added latency ${comparison.mode} c=16 p50 ≤ 1.5 ms`, measured: `${added.p50.toFixed(2)} ms`, pass: check(added.p50, (ms) => ms <= 1.5) });
    result.push({ target: `added latency ${comparison.mode} c=16 p99 ≤ 5 ms`, measured: `${added.p99.toFixed(2)} ms`, pass: check(added.p99, (ms) => ms <= 5) });
  }
  result.push({ target: 'TTFB over floor (stream c=16, p50) ≤ 0.5 ms', measured: `${report.ttfb.addedOverFloorP50.toFixed(2)} ms`, pass: check(report.ttfb.addedOverFloorP50, (ms) => ms <= 0.5) });
  const cpu = report.comparisons.find((entry) => entry.mode === 'json' && entry.connections === 16)?.tollgate?.cpuMicrosPerRequest ?? NaN;
  result.push({ target: 'gateway CPU per non-stream request (c=16) ≤ 130 µs', measured: `${cpu.toFixed(0)} µs`, pass: check(cpu, (us) => us <= 130) });
  const peak = runs.find((run) => run.target === 'tollgate')?.peakRssMiB ?? NaN;
  result.push({ target: 'Tollgate peak RSS under load ≤ 150 MiB', measured: `${peak.toFixed(1)} MiB`, pass: check(peak, (mib) => mib <= 150) });
  if (extras.slow) {
    const slow = extras.slow;
    const allOpen = slow.opened === slow.requested;
    result.push({ target: `${slow.requested} slow streams: all open, RSS ≤ 200 MiB`, measured: `${slow.opened} open, ${slow.rssOpenMiB.toFixed(1)} MiB (${slow.perStreamKiB.toFixed(1)} KiB/stream)`, pass: allOpen && slow.rssOpenMiB <= 200 });
  }
  if (extras.soak) {
    const growth = extras.soak.rssEndMiB / extras.soak.rssStartMiB - 1;
    result.push({ target: `soak ${extras.soak.minutes} min: RSS flat within 10%, no failures`, measured: `${(growth * 100).toFixed(1)}%, ${extras.soak.failed} failed`, pass: check(growth, (g) => Math.abs(g) <= 0.1 && extras.soak!.failed === 0) });
  }
  return result;
}

function table(rows: string[][]): string {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows.map((row, index) => {
    const line = row.map((cell, column) => (column < 2 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join('  ');
    return index === 0 ? `${line}\n${widths.map((width) => '-'.repeat(width)).join('  ')}` : line;
  }).join('\n');
}

const n = (value: number | null | undefined, digits = 2) => (value === null || value === undefined || !Number.isFinite(value) ? '-' : value.toFixed(digits));

export interface FullResults {
  runs: TargetRun[];
  report: Report;
  slow: SlowStreamsResult | null;
  soak: SoakResult | null;
  ledger: LedgerRateResult | null;
  tokens: TokensReport | null;
}

export function formatReport(results: FullResults): string {
  const { runs, report } = results;
  const out: string[] = [];
  const rows = [['mode', 'conns', 'direct r/s', 'floor r/s', 'tollgate r/s', 'T/F', 'p50 d/f/t ms', 'p99 d/f/t ms', '+p50 f/t', '+p99 f/t', 'cpu µs f/t', 'T/F cpu']];
  for (const c of report.comparisons) {
    rows.push([
      c.mode, String(c.connections),
      n(c.direct?.requestsPerSecond, 0), n(c.floor?.requestsPerSecond, 0), n(c.tollgate?.requestsPerSecond, 0), `${n(c.throughputRatio)}×`,
      `${n(c.direct?.latency?.p50)}/${n(c.floor?.latency?.p50)}/${n(c.tollgate?.latency?.p50)}`,
      `${n(c.direct?.latency?.p99)}/${n(c.floor?.latency?.p99)}/${n(c.tollgate?.latency?.p99)}`,
      `${n(c.floorAdded.p50)}/${n(c.tollgateAdded.p50)}`, `${n(c.floorAdded.p99)}/${n(c.tollgateAdded.p99)}`,
      `${n(c.floor?.cpuMicrosPerRequest, 0)}/${n(c.tollgate?.cpuMicrosPerRequest, 0)}`, `${n(c.cpuRatio)}×`,
    ]);
  }
  out.push(table(rows));
  const t = report.ttfb;
  out.push(`\nTTFB (stream, first body byte, c=16) p50 direct/floor/tollgate: ${n(t.direct)}/${n(t.floor)}/${n(t.tollgate)} ms; p99 floor/tollgate ${n(t.floorP99)}/${n(t.tollgateP99)} ms; Tollgate over floor +${n(t.addedOverFloorP50)} ms p50, +${n(t.addedOverFloorP99)} ms p99`);
  const one = report.ttfbOne;
  out.push(`TTFB at 1 connection (no queueing; not the verdict's) p50 direct/floor/tollgate: ${n(one.direct)}/${n(one.floor)}/${n(one.tollgate)} ms; Tollgate over floor +${n(one.addedOverFloorP50)} ms`);
  const utilisation = runs.map((run) => `${run.target} ${run.cells.map((cell) => `${(cell.cpuUtilisation * 100).toFixed(0)}%`).join('/')}`).join('; ');
  out.push(`Target CPU use per cell (100% = its core saturated; below that the load side limits): ${utilisation}`);
  const foreign = Math.max(0, ...runs.flatMap((run) => run.cells.map((cell) => cell.foreignCores)));
  out.push(foreign > 0.1
    ? `WARNING: other processes on this machine used up to ${foreign.toFixed(2)} cores during a measured run; rerun on a quiet machine before trusting ratios`
    : `Machine quiet: other processes used at most ${foreign.toFixed(2)} cores during any measured run`);
  out.push(`RSS before load → peak (VmHWM) after all load: ${runs.map((run) => `${run.target} ${n(run.idleRssMiB, 1)} → ${n(run.peakRssMiB, 1)} MiB`).join(', ')}`);
  const tollgateRun = runs.find((run) => run.target === 'tollgate');
  if (tollgateRun) out.push(`Tollgate startup (spawn → listening): ${n(tollgateRun.startupMs, 0)} ms`);
  const gcCells = tollgateRun?.cells.filter((cell) => cell.gcMicrosPerRequest) ?? [];
  if (gcCells.length > 0) {
    out.push(`Tollgate GC per request, young+full µs (from its /metrics): ${gcCells.map((cell) => `${cell.mode} c=${cell.connections} ${n(cell.gcMicrosPerRequest!.minor, 1)}+${n(cell.gcMicrosPerRequest!.major, 1)}`).join(', ')}`);
  }
  if (results.slow) {
    const s = results.slow;
    out.push(`Slow streams: ${s.opened}/${s.requested} open (${n(s.openMs, 0)} ms to open all), RSS ${n(s.rssBeforeMiB, 1)} → ${n(s.rssOpenMiB, 1)} MiB = ${n(s.perStreamKiB, 1)} KiB/stream, ${n(s.rssAfterMiB, 1)} MiB after`);
  }
  if (results.soak) {
    const s = results.soak;
    out.push(`Soak ${s.minutes} min (16 conns, alternating non-stream/stream): ${s.requests} requests, ${s.failed} failed, RSS ${n(s.rssStartMiB, 1)} → ${n(s.rssEndMiB, 1)} MiB (max ${n(s.rssMaxMiB, 1)}, slope ${n(s.slopeMiBPerMinute)} MiB/min)`);
  }
  if (results.ledger) {
    const l = results.ledger;
    out.push(`Ledger (SQLite, sequential awaited inserts): ${l.records} in ${n(l.seconds)} s = ${n(l.perSecond, 0)}/s, p50 ${n(l.p50Ms * 1000, 0)} µs, p99 ${n(l.p99Ms * 1000, 0)} µs`);
  }
  if (results.tokens) {
    const k = results.tokens;
    out.push(`Local model (local/tollgate-small, max_tokens 256): 1 stream ${n(k.single.tokensPerSecond, 0)} tokens/s; 16 streams ${n(k.concurrent.tokensPerSecond, 0)} tokens/s total (${n(k.concurrent.perStreamTokensPerSecond, 0)}/s each, first byte p50 ${n(k.concurrent.firstByte?.p50, 1)} ms); startup ${n(k.startupMs, 0)} ms`);
  }
  out.push('\nVerdicts:');
  for (const verdict of report.verdicts) out.push(`  ${verdict.pass === null ? 'n/a ' : verdict.pass ? 'PASS' : 'FAIL'}  ${verdict.target}: ${verdict.measured}`);
  return out.join('\n');
}
