/** Upstream bodies written field by field are exactly what JSON.stringify writes for the same fields. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { JsonBody } from '../src/vendors/shared/json-body.js';
import { jsonString } from '../src/vendors/shared/json-string.js';

/** Any UTF-16 text, lone surrogate halves and control characters included. */
const anyText = fc.array(fc.oneof(fc.integer({ min: 0, max: 0x7f }), fc.integer({ min: 0, max: 0xffff })), { maxLength: 40 }).map((codes) => String.fromCharCode(...codes));
const name = fc.constantFrom('model', 'prompt', 'max_tokens', 'n', 'stop', 'logit_bias', 'user', 'seed', 'stream', 'temperature');

test('a body written field by field is the JSON of the same fields', () => {
  const field = fc.oneof(
    fc.record({ kind: fc.constant('string' as const), name, value: anyText }),
    fc.record({ kind: fc.constant('number' as const), name, value: fc.oneof(fc.integer(), fc.double(), fc.constantFrom(-0, NaN, Infinity, 2 ** 53)) }),
    fc.record({ kind: fc.constant('boolean' as const), name, value: fc.boolean() }),
    fc.record({ kind: fc.constant('value' as const), name, value: fc.oneof(fc.array(anyText, { maxLength: 4 }), fc.array(fc.nat(), { maxLength: 4 }), fc.dictionary(fc.nat().map(String), fc.integer({ min: -100, max: 100 }), { maxKeys: 3 })) }),
  );
  // Distinct names: an object has each key once, and that is all a body builder writes.
  fc.assert(fc.property(fc.uniqueArray(field, { selector: (each) => each.name, maxLength: 8 }), (fields) => {
    const body = new JsonBody();
    const expected: Record<string, unknown> = {};
    for (const each of fields) {
      if (each.kind === 'string') body.string(each.name, each.value);
      else if (each.kind === 'number') body.number(each.name, each.value);
      else if (each.kind === 'boolean') body.boolean(each.name, each.value);
      else body.value(each.name, each.value);
      expected[each.name] = each.value;
    }
    assert.equal(body.text, JSON.stringify(expected));
  }), { numRuns: 3_000 });
});

test('raw JSON goes in as given, and a string is quoted as JSON.stringify quotes it', () => {
  assert.equal(new JsonBody().raw('stream_options', '{"include_usage":true}').text, '{"stream_options":{"include_usage":true}}');
  assert.equal(new JsonBody().text, '{}');
  fc.assert(fc.property(anyText, (text) => jsonString(text) === JSON.stringify(text)), { numRuns: 10_000 });
});
