/**
 * The guards Tollgate is held to, each one verdict from the matrix: throughput against the floor
 * in every cell, latency added at 16 connections, peak memory, and CPU per non-stream request.
 */
import type { Comparison } from './report.js';
import type { TargetRun } from './matrix.js';

/** Tollgate's requests/s over the floor's, at least, in every cell at 16 and 64 connections. */
export const minimumThroughputRatio = 1.0;
/** Latency added over calling the mock directly, p99 at 16 connections, at most, ms. */
export const maximumAddedP99Ms = 5;
/** Tollgate's peak RSS under the matrix's load, at most, MiB. */
export const maximumPeakRssMiB = 150;
/** Tollgate's CPU per non-stream request at 16 connections, at most, µs. */
export const maximumCpuMicrosPerRequest = 110;

/** One guard's outcome. */
export interface Verdict {
  /** The guard, with its threshold. */
  guard: string;
  /** Null when the run measured none of what the guard covers. */
  pass: boolean | null;
  /** What was measured, cell by cell. */
  measured: string;
}

const modeName = (mode: string) => (mode === 'json' ? 'non-stream' : 'stream');
const finite = (value: number | undefined) => (value !== undefined && Number.isFinite(value) ? value : null);

/** One measured figure a guard covers; null when the run did not measure it. */
interface GuardCell {
  label: string;
  value: number | null;
  format(value: number): string;
}

/** A guard holds when it holds in every measured cell; a cell not measured is named as such. */
function verdict(guard: string, cells: GuardCell[], holds: (value: number) => boolean): Verdict {
  const values = cells.flatMap((cell) => (cell.value === null ? [] : [cell.value]));
  const measured = cells.map((cell) => `${cell.label} ${cell.value === null ? 'not measured' : cell.format(cell.value)}`).join(', ');
  return { guard, pass: values.length === 0 ? null : values.every(holds), measured };
}

export function guardVerdicts(comparisons: Comparison[], runs: TargetRun[]): Verdict[] {
  const find = (mode: string, connections: number) => comparisons.find((entry) => entry.mode === mode && entry.connections === connections);
  const throughput = ['json', 'stream'].flatMap((mode) =>
    [16, 64].map((connections): GuardCell => {
      const comparison = find(mode, connections);
      const rounds = comparison?.roundRatios;
      return {
        label: `${modeName(mode)} c=${connections}`,
        value: finite(comparison?.throughputRatio),
        format: (ratio) => `${ratio.toFixed(2)}×${rounds ? ` (rounds ${rounds.min.toFixed(2)}–${rounds.max.toFixed(2)}×)` : ''}`,
      };
    }),
  );
  const addedP99 = ['json', 'stream'].map(
    (mode): GuardCell => ({
      label: modeName(mode),
      value: finite(find(mode, 16)?.tollgateAdded.p99),
      format: (ms) => `${ms.toFixed(2)} ms`,
    }),
  );
  const peak: GuardCell = {
    label: 'Tollgate',
    value: finite(runs.find((run) => run.target === 'tollgate')?.peakRssMiB),
    format: (mib) => `${mib.toFixed(1)} MiB`,
  };
  const cpu: GuardCell = { label: 'c=16', value: finite(find('json', 16)?.tollgate?.cpuMicrosPerRequest), format: (us) => `${us.toFixed(0)} µs` };
  return [
    verdict(`throughput ≥ ${minimumThroughputRatio.toFixed(1)}× the floor in every cell`, throughput, (ratio) => ratio >= minimumThroughputRatio),
    verdict(`added p99 ≤ ${maximumAddedP99Ms} ms at 16 connections`, addedP99, (ms) => ms <= maximumAddedP99Ms),
    verdict(`peak RSS ≤ ${maximumPeakRssMiB} MiB`, [peak], (mib) => mib <= maximumPeakRssMiB),
    verdict(`CPU per non-stream request ≤ ${maximumCpuMicrosPerRequest} µs`, [cpu], (us) => us <= maximumCpuMicrosPerRequest),
  ];
}
