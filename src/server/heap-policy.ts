/**
 * V8 garbage-collector settings applied once at `serve` (each cluster worker applies its own).
 * V8 reads the two GC flags at each GC, so setting them at start covers the process.
 *
 * Old-generation growth: V8's own factor goes up to 4x, which let the gateway (~25 MB of live old
 * space) reach ~255 MiB RSS under load; 1.2x kept ~170 MiB but full GCs every half second pushed
 * the added p99 from ~2.3 to ~8 ms; 1.6x (the default) keeps ~180 MiB with p99 near 3 ms.
 *
 * Parallel scavenge: the main thread waits for helper threads at each young-generation GC; on one
 * core they take turns with it and the pause grows (docs/performance.md, "Scavenges on one core").
 * The other parallel-GC flags are not safe to change after start, so only this one is set.
 *
 * WebAssembly tier-up: undici's llhttp is WebAssembly; V8's optimising recompile keeps its working
 * memory. `--liftoff-only` (the default; TOLLGATE_WASM_TIER_UP=on restores V8's) cut the peak RSS by
 * ~8 MiB for ~2% more CPU a non-stream request. It is set before the first upstream request compiles it.
 */
import { availableParallelism } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import type { Config } from '../config/config.js';

type ParallelScavenge = Config['parallelScavenge'];

/** Whether scavenges run on helper threads: `auto` keeps them unless this process has one core. */
export function scavengesInParallel(setting: ParallelScavenge, cores: number): boolean {
  if (setting === 'auto') return cores > 1;
  return setting === 'on';
}

export function applyHeapPolicy(policy: { growingPercent: number; parallelScavenge: ParallelScavenge; wasmTierUp: boolean }): void {
  if (policy.growingPercent > 0) setFlagsFromString(`--heap-growing-percent=${policy.growingPercent}`);
  // Only ever turned off: V8's default is on.
  if (!scavengesInParallel(policy.parallelScavenge, availableParallelism())) setFlagsFromString('--no-parallel-scavenge');
  if (!policy.wasmTierUp) setFlagsFromString('--liftoff-only');
}
