/**
 * V8 garbage-collector settings, applied once at `serve` (each cluster worker applies its own).
 *
 * Old-generation growth: V8's factor (up to 4x) let the gateway reach ~255 MiB RSS under load;
 * 1.2x kept ~170 MiB but full GCs every half second raised the added p99 from ~2.3 to ~8 ms;
 * 1.6x (the default) keeps ~180 MiB with p99 near 3 ms.
 * Parallel scavenge: on one core the helper threads take turns with the main thread and each pause
 * grows (docs/performance.md, "Scavenges on one core"); the other parallel-GC flags cannot change
 * after start. WebAssembly tier-up: `--liftoff-only` (the default; TOLLGATE_WASM_TIER_UP=on restores
 * V8's) keeps V8 from recompiling undici's llhttp: ~8 MiB less peak RSS, ~2% more CPU a request.
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
