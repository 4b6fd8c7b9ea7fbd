/**
 * The pieces of a hand-written check that lets a body skip zod (the completions request's
 * `isPlainCompletionRequest`): each accepts exactly what the matching zod schema piece accepts, or less.
 */

/** A JSON object (not null, not an array), as `z.object` requires. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `z.string().nullish()` */
export function isNullOrString(value: unknown): boolean {
  return value == null || typeof value === 'string';
}

/** `z.boolean().nullish()` */
export function isNullOrBoolean(value: unknown): boolean {
  return value == null || typeof value === 'boolean';
}

/** `z.number().int().nonnegative()`: safe integers, as zod 4's `.int()` requires. */
export function isNonNegativeInteger(value: unknown): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** `z.number().int().nonnegative().nullish()` */
export function isCount(value: unknown): boolean {
  return value == null || isNonNegativeInteger(value);
}

/** Absent, or an object whose listed fields are all counts (others are ignored, as zod does). */
export function hasCounts(value: unknown, fields: readonly string[]): boolean {
  if (value == null) return true;
  if (!isRecord(value)) return false;
  for (const field of fields) if (!isCount(value[field])) return false;
  return true;
}
