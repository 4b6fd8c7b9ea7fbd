/**
 * How far V8 lets the old generation grow before its next full GC. V8's own factor goes up to 4×
 * the live size, which under steady load let a gateway with ~40 MiB of live old-space data reach
 * ~250 MiB RSS; 1.2× kept it near 165 MiB for about 3% more CPU (both measured with the
 * benchmark's interleaved A/B, README "Benchmark and performance"). The flag is read by V8 at each
 * GC, so setting it once at start takes effect for the whole process; each cluster worker runs
 * `serve` and sets its own.
 */
import { setFlagsFromString } from 'node:v8';

export function applyHeapPolicy(growingPercent: number): void {
  if (growingPercent > 0) setFlagsFromString(`--heap-growing-percent=${growingPercent}`);
}
