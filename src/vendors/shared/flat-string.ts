/**
 * The same string, made flat (one buffer) now rather than each time it is read or copied into a
 * larger one: converting a string to a number flattens it in V8 (the trick pino's `flatstr` uses).
 * For strings kept and reused many times (cached chunk pieces).
 */
export function flat(text: string): string {
  Number(text);
  return text;
}
