/** The property the hand-written checks that let hot upstream bodies skip zod must keep. */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { z } from 'zod';

/** What a field should not hold: null, undefined, numbers of every kind, strings, booleans, an empty array and object. */
export const oddValue = fc.oneof(
  fc.constant(null),
  fc.constant(undefined),
  fc.integer({ min: -3, max: 3 }),
  fc.double(),
  fc.constant(2 ** 60),
  fc.string(),
  fc.boolean(),
  fc.constant([]),
  fc.constant({}),
);

/** A token count: mostly a natural number, sometimes an odd value. */
export const countOrOdd = fc.oneof({ arbitrary: fc.nat(), weight: 4 }, { arbitrary: oddValue, weight: 1 });

/**
 * Over 20,000 generated values, `check` never accepts one that `schema` refuses, and it takes the
 * fast path often enough (more than 300 times) for that to mean something.
 */
export function assertNeverAcceptsWhatSchemaRefuses(values: fc.Arbitrary<unknown>, check: (raw: unknown) => boolean, schema: z.ZodType): void {
  let fast = 0;
  fc.assert(
    fc.property(values, (raw) => {
      if (!check(raw)) return true;
      fast++;
      return schema.safeParse(raw).success;
    }),
    { numRuns: 20_000 },
  );
  assert.ok(fast > 300, `the fast path took only ${fast} values`);
}
