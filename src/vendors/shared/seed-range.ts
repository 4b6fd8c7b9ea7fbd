/**
 * The seeds a vendor accepts, and the one rule that maps a client's seed (any int64, the schema's
 * range) into them: seed + replica, wrapped into the range (for a signed 2^k range, the value's low
 * k bits read as a signed integer, like a cast in C). It is deterministic, keeps every in-range seed
 * of replica 0 unchanged, and gives each emulated choice (replica r of n) its own seed, so the n
 * choices differ and each stays reproducible. Bounds are bigints: most int64s are not exact doubles.
 */

/** The seeds a vendor accepts, bounds included. */
export interface SeedRange {
  min: bigint;
  max: bigint;
}

/** OpenAI's seed: a signed 64-bit integer. */
export const int64SeedRange: SeedRange = { min: -(2n ** 63n), max: 2n ** 63n - 1n };

/** A signed 32-bit seed (Gemini's `generationConfig.seed`). */
export const int32SeedRange: SeedRange = { min: -(2n ** 31n), max: 2n ** 31n - 1n };

/** A non-negative 32-bit seed, for servers that document seeds as non-negative integers. */
export const nonNegativeInt32SeedRange: SeedRange = { min: 0n, max: 2n ** 31n - 1n };

/**
 * The seed replica `replica` sends: `seed + replica` wrapped into `range`.
 * `seed` must be an integer (the request schema guarantees it).
 */
export function seedInRange(seed: number, replica: number, range: SeedRange): bigint {
  const size = range.max - range.min + 1n;
  const offset = (clientSeed(seed) + BigInt(replica) - range.min) % size;
  return range.min + (offset < 0n ? offset + size : offset);
}

/**
 * The client's seed as the int64 it meant. JSON numbers are doubles, and the largest int64
 * (2^63 − 1) arrives as 2^63, the only double the schema accepts above it: it is read back as
 * 2^63 − 1, so a vendor with OpenAI's range receives exactly what the client wrote.
 */
function clientSeed(seed: number): bigint {
  const value = BigInt(seed);
  return value > int64SeedRange.max ? int64SeedRange.max : value;
}
