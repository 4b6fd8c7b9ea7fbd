/**
 * prom-client hashes the label object on every `inc`/`observe` call; on the request path that is a
 * sort and a string build per metric per request. A child bound to its label values once, and
 * found again by a plain string key, skips all of it.
 */
// Label values come from configured vendors, models and accounts; the cap only guards memory.
const MAX_CHILDREN = 10_000;

/** Wraps `(...values) => metric.labels(...values)` so each distinct list of values is bound once. */
export function labelChildren<C>(bind: (...values: string[]) => C): (...values: string[]) => C {
  const cache = new Map<string, C>();
  return (...values: string[]) => {
    const key = values.join('\u0000');
    let child = cache.get(key);
    if (child === undefined) {
      if (cache.size >= MAX_CHILDREN) cache.clear();
      child = bind(...values);
      cache.set(key, child);
    }
    return child;
  };
}
