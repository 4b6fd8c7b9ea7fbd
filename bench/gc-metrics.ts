/**
 * Tollgate's garbage-collection time, read from its own `/metrics` (prom-client's default
 * `nodejs_gc_duration_seconds`, fed by V8's GC events): the benchmark reports it per request so
 * that a change that makes request objects outlive their request (README, "Objects that outlive
 * their request") shows up as young-generation GC time, not only as a vague loss of throughput.
 */

/** Seconds of GC so far by kind (`minor`, `major`, `incremental`, `weakcb`). */
export type GcSeconds = Record<string, number>;

export async function readGcSeconds(metricsUrl: string): Promise<GcSeconds | null> {
  try {
    const response = await fetch(metricsUrl);
    if (!response.ok) return null;
    const text = await response.text();
    const seconds: GcSeconds = {};
    for (const match of text.matchAll(/^nodejs_gc_duration_seconds_sum\{kind="(\w+)"\} ([0-9.e+-]+)$/gm)) seconds[match[1]] = Number(match[2]);
    return seconds;
  } catch {
    return null;
  }
}

/** µs of minor and major (incl. incremental marking) GC per request between two readings. */
export function gcMicrosPerRequest(before: GcSeconds | null, after: GcSeconds | null, requests: number): { minor: number; major: number } | null {
  if (!before || !after || requests <= 0) return null;
  const delta = (kind: string) => (after[kind] ?? 0) - (before[kind] ?? 0);
  return { minor: (delta('minor') * 1e6) / requests, major: ((delta('major') + delta('incremental')) * 1e6) / requests };
}
