import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { completionRequestSchema } from '../src/completions/completion-request-schema.js';
import { isPlainCompletionRequest } from '../src/completions/plain-completion-request.js';
import { assertNeverAcceptsWhatSchemaRefuses, oddValue } from './support/plain-check-property.js';

/** A number near the edges of the ranges the schema sets. */
const edgy = fc.oneof(
  fc.constantFrom(-101, -100, -2.5, -2, -1, -0.5, 0, 0.5, 1, 1.5, 2, 2.5, 4, 5, 6, 16, 20, 21, 128, 129, 2 ** 31 - 1, 2 ** 31, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2, -Number.MAX_SAFE_INTEGER - 2, 2 ** 63, -(2 ** 63), 2 ** 64, -(2 ** 64), 2 ** 63 + 0.5, NaN, Infinity),
  fc.integer({ min: -10, max: 300 }),
  fc.double({ min: -3, max: 3 }),
);
const text = fc.oneof(fc.constant(''), fc.string({ maxLength: 6 }), fc.constant('x'.repeat(256)), fc.constant('x'.repeat(257)));
const texts = fc.oneof(text, fc.array(text, { maxLength: 6 }), fc.constant(Array.from({ length: 2049 }, () => 'p')));
const anyValue = fc.oneof({ arbitrary: oddValue, weight: 1 }, { arbitrary: edgy, weight: 3 }, { arbitrary: texts, weight: 1 }, { arbitrary: fc.boolean(), weight: 1 });
const streamOptions = fc.oneof(
  fc.constant(null),
  fc.record({ include_usage: fc.oneof(fc.boolean(), oddValue), include_obfuscation: fc.oneof(fc.boolean(), oddValue) }, { requiredKeys: [] }),
  fc.constant({ include_usage: true, other: 1 }),
  fc.constant([]),
  oddValue,
);

/** Mostly a valid value for the field, sometimes anything. */
const mostly = <T>(valid: fc.Arbitrary<T>) => fc.oneof({ arbitrary: valid, weight: 12 }, { arbitrary: anyValue, weight: 1 });
const nullable = <T>(valid: fc.Arbitrary<T>) => fc.oneof({ arbitrary: valid, weight: 4 }, { arbitrary: fc.constant(null), weight: 1 });

const fields = {
  model: mostly(fc.constantFrom('openai/gpt-4o', 'local/tiny', 'x')),
  prompt: mostly(nullable(fc.oneof(fc.string({ maxLength: 20 }), fc.array(fc.string({ maxLength: 5 }), { minLength: 1, maxLength: 4 }), fc.constant([1, 2, 3]), fc.constant([100257, 100276])))),
  max_tokens: mostly(nullable(fc.integer({ min: 0, max: 2 ** 31 - 1 }))),
  stream: mostly(nullable(fc.boolean())),
  echo: mostly(nullable(fc.boolean())),
  stream_options: mostly(streamOptions),
  temperature: mostly(nullable(fc.double({ min: 0, max: 2, noNaN: true }))),
  top_p: mostly(nullable(fc.double({ min: 0, max: 1, noNaN: true }))),
  presence_penalty: mostly(nullable(fc.double({ min: -2, max: 2, noNaN: true }))),
  frequency_penalty: mostly(nullable(fc.double({ min: -2, max: 2, noNaN: true }))),
  n: mostly(nullable(fc.integer({ min: 1, max: 128 }))),
  best_of: mostly(nullable(fc.integer({ min: 0, max: 20 }))),
  logprobs: mostly(nullable(fc.integer({ min: 0, max: 5 }))),
  seed: mostly(nullable(fc.oneof(fc.maxSafeInteger(), fc.constantFrom(2 ** 63, -(2 ** 63), 2 ** 62 + 2 ** 40)))),
  stop: mostly(nullable(fc.oneof(fc.string({ maxLength: 4 }), fc.array(fc.string({ maxLength: 3 }), { minLength: 1, maxLength: 4 })))),
  suffix: mostly(nullable(fc.string({ maxLength: 5 }))),
  user: mostly(nullable(fc.string({ maxLength: 256 }))),
};

/** Mostly a body of the usual fields, each sometimes odd; sometimes with logit_bias or an unknown key; sometimes anything at all. */
const body = fc.oneof(
  { arbitrary: fc.record(fields, { requiredKeys: [] }), weight: 12 },
  { arbitrary: fc.tuple(fc.record(fields, { requiredKeys: [] }), fc.constantFrom('logit_bias', 'unknown_key', 'constructor'), anyValue).map(([fields, key, value]) => ({ ...fields, [key]: value })), weight: 2 },
  { arbitrary: oddValue, weight: 1 },
  { arbitrary: fc.constant([]), weight: 1 },
);

test('the hand-written request check never accepts a body the request schema refuses', () => {
  assertNeverAcceptsWhatSchemaRefuses(body, isPlainCompletionRequest, completionRequestSchema);
});

test('the schema returns a body the hand-written check accepts as it is (so reading the body itself is the same)', () => {
  const fromJson = body.map((raw) => JSON.parse(JSON.stringify(raw ?? null)) as unknown);
  let accepted = 0;
  fc.assert(fc.property(fromJson, (raw) => {
    if (!isPlainCompletionRequest(raw)) return;
    accepted++;
    assert.deepEqual(completionRequestSchema.parse(raw), raw);
  }), { numRuns: 5_000 });
  assert.ok(accepted > 300, `the check accepted only ${accepted} bodies`);
});
