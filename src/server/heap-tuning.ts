/**
 * V8 heap settings for the serving processes, chosen by measurement (the benchmark's proxy load:
 * the openai vendor against a mock, 20,000 small completions over 2 connections, gateway pinned
 * to one core; peak RSS, time in GC and CPU per request).
 *
 * Old generation growth: when GC is cheap compared to the program, as it is in this one, V8 lets
 * the old generation grow to up to 4× its live size before the next full GC. Request objects that
 * outlive two young-generation GCs are promoted and die there, so with ~25 MiB live the heap
 * climbed to ~90 MiB between full GCs. Capping the growth at 1.5× took peak RSS from 175–190 to
 * 150–156 MiB; GC pauses rose by ~2 µs per request and CPU per request stayed within run-to-run
 * noise (≤2%). V8 reads this flag at every GC, so it can be set from code at start. The limit also
 * counts ArrayBuffer memory, so a hot path must not allocate large typed arrays per request (the
 * local sampler once did, 90 KiB per choice, and then paid a full GC every ~100 ms).
 *
 * Young generation: left at V8's default (16 MiB per semi-space). 4 MiB (`--max-semi-space-size=4`
 * in NODE_OPTIONS) took peak RSS from 150–159 to 140–144 MiB, but with four times as many
 * scavenges CPU per request rose by up to 10% in the same runs; a gateway should not pay latency
 * for that by default, so it is left to operators who prefer memory.
 *
 * An operator's own value (command line or NODE_OPTIONS) always wins.
 */
import { setFlagsFromString } from 'node:v8';

/** Old generation may grow to (1 + this / 100) × its live size before the next full GC. */
export const HEAP_GROWING_PERCENT = 50;

/** Whether this process was given the V8 flag, spelled with dashes or underscores. */
function hasFlag(name: string): boolean {
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  return given.some((argument) => argument.replaceAll('_', '-').startsWith(`--${name}`));
}

/** For the process that serves requests; call before it starts taking load. */
export function tuneHeap(): void {
  if (!hasFlag('heap-growing-percent')) setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
