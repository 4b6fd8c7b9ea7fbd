/**
 * How far V8 lets the old generation grow past its live size before the next full GC. V8's own
 * factor goes up to 4x, which under steady load let the gateway (~25 MB of live old-space data)
 * reach ~255 MiB RSS. 1.2x kept it near 170 MiB, but full GCs (~9 ms pauses) came every half
 * second and pushed the added p99 latency from ~2.3 to ~8 ms; 1.6x (the default) kept ~180 MiB
 * with p99 near 3 ms (benchmark, README "Benchmark and performance"). V8 reads the flag at each
 * GC, so setting it once at start covers the process; each cluster worker runs `serve` and sets
 * its own.
 */
import { setFlagsFromString } from 'node:v8';

export function applyHeapPolicy(growingPercent: number): void {
  if (growingPercent > 0) setFlagsFromString(`--heap-growing-percent=${growingPercent}`);
}
