import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import fastJson from 'fast-json-stringify';
import { completionResponseSchema, serializeChunk } from '../src/http/completion-serializers.js';
import { completionChunkSchema, completionSchema } from '../src/completions/completion-response-schema.js';

// Any UTF-16 text: quotes, backslashes, control characters, emoji and lone surrogates included.
const text = fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: fc.constantFrom('"', '\\', '\n', '\u0000', '\ud83d', '\ude00', 'é', 'a') }));
const token = fc.integer({ min: 0, max: 2 ** 31 });
const logprobs = fc.option(
  fc.integer({ min: 0, max: 4 }).chain((length) =>
    fc.record({
      text_offset: fc.array(token, { minLength: length, maxLength: length }),
      token_logprobs: fc.array(fc.option(fc.double({ noNaN: true, noDefaultInfinity: true, max: 0 })), { minLength: length, maxLength: length }),
      tokens: fc.array(text, { minLength: length, maxLength: length }),
      top_logprobs: fc.array(fc.option(fc.dictionary(text, fc.double({ noNaN: true, noDefaultInfinity: true }))), { minLength: length, maxLength: length }),
    }),
  ),
);
const usage = fc.record({
  completion_tokens: token,
  prompt_tokens: token,
  total_tokens: token,
  completion_tokens_details: fc.record({ accepted_prediction_tokens: token, audio_tokens: token, reasoning_tokens: token, rejected_prediction_tokens: token }),
  prompt_tokens_details: fc.record({ audio_tokens: token, cached_tokens: token }),
});
const completion = <Finish, Usage>(finish: fc.Arbitrary<Finish>, usageField: fc.Arbitrary<Usage>) =>
  fc.record({
    id: text.map((suffix) => `cmpl-${suffix}`),
    object: fc.constant('text_completion' as const),
    created: fc.integer({ min: 0, max: 2 ** 40 }),
    choices: fc.array(fc.record({ text, index: fc.nat(64), logprobs, finish_reason: finish }), { maxLength: 3 }),
    model: text,
    system_fingerprint: fc.option(text),
    usage: usageField,
  });
const finishReason = fc.constantFrom('stop' as const, 'length' as const, 'content_filter' as const);

test('a stream chunk is written as the same JSON value JSON.stringify writes, for any text', () => {
  fc.assert(
    fc.property(completion(fc.option(finishReason), fc.option(usage)), (chunk) => {
      const written = serializeChunk(chunk);
      assert.deepEqual(JSON.parse(written), JSON.parse(JSON.stringify(chunk)));
      completionChunkSchema.parse(JSON.parse(written));
    }),
    { numRuns: 2_000 },
  );
});

test("the whole answer's response schema writes the same JSON value JSON.stringify writes", () => {
  // The same compilation fastify makes of the route's 200 response schema.
  const serializeCompletion = fastJson(completionResponseSchema);
  fc.assert(
    fc.property(completion(finishReason, usage), (answer) => {
      const written = serializeCompletion(answer);
      assert.deepEqual(JSON.parse(written), JSON.parse(JSON.stringify(answer)));
      completionSchema.parse(JSON.parse(written));
    }),
    { numRuns: 2_000 },
  );
});

test('a chunk that asked for no usage has no usage field, as with JSON.stringify', () => {
  const chunk = { id: 'cmpl-1', object: 'text_completion' as const, created: 1, choices: [], model: 'm', system_fingerprint: null };
  assert.equal(JSON.parse(serializeChunk(chunk)).usage, undefined);
  assert.equal('usage' in JSON.parse(serializeChunk(chunk)), false);
});
