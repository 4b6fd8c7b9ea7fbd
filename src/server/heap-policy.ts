/**
 * V8 garbage-collector settings applied once at `serve` (each cluster worker runs `serve` and
 * applies its own).
 *
 * Old-generation growth: how far V8 lets the old generation grow past its live size before the
 * next full GC. V8's own factor goes up to 4x, which under steady load let the gateway (~25 MB of
 * live old-space data) reach ~255 MiB RSS. 1.2x kept it near 170 MiB, but full GCs (~9 ms pauses)
 * came every half second and pushed the added p99 latency from ~2.3 to ~8 ms; 1.6x (the default)
 * kept ~180 MiB with p99 near 3 ms (benchmark). V8 reads the
 * flag at each GC, so setting it once at start covers the process.
 *
 * Parallel scavenge: V8 splits each young-generation GC between the main thread and helper
 * threads, and the main thread waits for all of them. When the process has one core (CPU affinity,
 * a one-CPU container) the helpers cannot run beside the main thread: they take turns on that core
 * and the pause grows (docs/performance.md, "Scavenges on one core": 8.6% less CPU a stream at 64 connections
 * without them, 3.3% at 16). V8 also reads this flag at each scavenge; the other parallel-GC flags
 * are not safe to change after start (a V8 check fails), so only this one is set. With more than
 * one core the helpers do run alongside, and V8's default is kept.
 *
 * WebAssembly tier-up: undici parses upstream answers with llhttp compiled to WebAssembly. V8
 * compiles it first with its baseline compiler (Liftoff), then recompiles the hot functions with
 * its optimising compiler, whose working memory stays with the process's allocator. With
 * `--liftoff-only` (the default here; TOLLGATE_WASM_TIER_UP=on restores V8's) the peak RSS under the
 * benchmark's load fell ~8 MiB, for about 2% more CPU a non-stream request. It is set before the first upstream request compiles the module.
 */
import { availableParallelism } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import type { Config } from '../config/config.js';

export type ParallelScavenge = Config['parallelScavenge'];

export interface HeapPolicy {
  growingPercent: number;
  parallelScavenge: ParallelScavenge;
  wasmTierUp: boolean;
}

/** Whether scavenges run on helper threads: `auto` keeps them unless this process has one core. */
export function scavengesInParallel(setting: ParallelScavenge, cores: number): boolean {
  if (setting === 'auto') return cores > 1;
  return setting === 'on';
}

export function applyHeapPolicy(policy: HeapPolicy): void {
  if (policy.growingPercent > 0) setFlagsFromString(`--heap-growing-percent=${policy.growingPercent}`);
  // Only ever turned off: V8's default is on.
  if (!scavengesInParallel(policy.parallelScavenge, availableParallelism())) setFlagsFromString('--no-parallel-scavenge');
  if (!policy.wasmTierUp) setFlagsFromString('--liftoff-only');
}
