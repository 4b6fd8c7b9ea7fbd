import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ChunkBuilder } from '../src/completions/chunk-builder.js';
import { completionJson, usageJson, type Completion } from '../src/completions/completion-objects.js';
import { escaped, isAscii, plainAscii, plainWide, textKind } from '../src/vendors/shared/json-string.js';

/** Any UTF-16 text, lone surrogate halves and control characters included. */
const anyText = fc.array(fc.oneof(fc.integer({ min: 0, max: 0x7f }), fc.integer({ min: 0, max: 0xffff })), { maxLength: 40 }).map((codes) => String.fromCharCode(...codes));

test('a text said to go into JSON as it is gives exactly what JSON.stringify gives, and is ASCII when said to be', () => {
  const check = (text: string) => {
    const kind = textKind(text);
    if (kind !== escaped) assert.equal(`"${text}"`, JSON.stringify(text), JSON.stringify(text));
    if (kind === plainAscii) assert.ok(isAscii(text));
    if (kind === plainWide) assert.ok(!isAscii(text));
  };
  fc.assert(fc.property(anyText, (text) => check(text) === undefined), { numRuns: 20_000 });
  for (const text of ['', ' word', 'say "hi"', 'a\\b', 'line\nbreak', '\u0000', '\ud83d\ude00', '\ud83d', '\u2028', '\u007f', 'café']) check(text);
  // Past 24 characters a regular expression looks first: long texts, plain and with one odd character anywhere.
  const long = 'The quick brown fox jumps over the lazy dog~';
  fc.assert(fc.property(fc.nat({ max: long.length }), fc.constantFrom('', '"', '\\', '\n', '\u007f', 'é', '\ud83d', '\ud83d\ude00', '\u2028'), (at, odd) => check(long.slice(0, at) + odd + long.slice(at)) === undefined));
  fc.assert(fc.property(fc.stringMatching(/^[ -~]{20,80}$/), (text) => check(text) === undefined));
  assert.equal(textKind(long), plainAscii);
  assert.equal(textKind(`${long}é`), plainWide);
  assert.equal(textKind(`${long}"`), escaped);
  assert.equal(textKind(' word'), plainAscii);
  assert.equal(textKind('café'), plainWide);
  assert.equal(textKind('say "hi"'), escaped);
});

test('every chunk is one SSE event whose JSON is the text_completion chunk, across fingerprint changes', () => {
  const finish = fc.constantFrom(null, 'stop', 'length');
  const step = fc.oneof(
    { arbitrary: fc.record({ kind: fc.constant('choice' as const), index: fc.nat({ max: 3 }), text: anyText, finish }), weight: 6 },
    { arbitrary: fc.record({ kind: fc.constant('fingerprint' as const), fingerprint: fc.oneof(fc.constant(null), fc.string(), fc.constant('null')) }), weight: 1 },
  );
  fc.assert(fc.property(fc.string(), fc.string(), fc.boolean(), fc.array(step, { maxLength: 12 }), (id, model, includeUsage, steps) => {
    const builder = new ChunkBuilder(id, 1_700_000_000, model, includeUsage);
    let fingerprint: string | null = null;
    for (const each of steps) {
      if (each.kind === 'fingerprint') {
        builder.setFingerprint(each.fingerprint);
        if (each.fingerprint) fingerprint = each.fingerprint;
        continue;
      }
      const event = builder.choice(each.index, each.text, null, each.finish);
      assert.ok(event.startsWith('data: ') && event.endsWith('\n\n') && !event.slice(0, -2).includes('\n'));
      const expected: Record<string, unknown> = {
        id, object: 'text_completion', created: 1_700_000_000,
        choices: [{ text: each.text, index: each.index, logprobs: null, finish_reason: each.finish }],
        model, system_fingerprint: fingerprint,
      };
      if (includeUsage) expected.usage = null;
      assert.deepEqual(JSON.parse(event.slice(6)), expected);
      // Declared ASCII (sent as latin1) only when it is; and whenever what went in was ASCII.
      if (builder.ascii) assert.match(event, /^[\x00-\x7f]*$/);
      else assert.doesNotMatch(`${id}${model}${fingerprint ?? ''}${each.text}`, /^[\x00-\x7f]*$/);
    }
    const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5, completion_tokens_details: { accepted_prediction_tokens: 0, audio_tokens: 0, reasoning_tokens: 0, rejected_prediction_tokens: 0 }, prompt_tokens_details: { audio_tokens: 0, cached_tokens: 0 } };
    const usageEvent = builder.usage(usage);
    assert.deepEqual(JSON.parse(usageEvent.slice(6)), { id, object: 'text_completion', created: 1_700_000_000, choices: [], model, system_fingerprint: fingerprint, usage });
    if (builder.ascii) assert.match(usageEvent, /^[\x00-\x7f]*$/);
  }), { numRuns: 2_000 });
});

test('a chunk with logprobs carries them', () => {
  const builder = new ChunkBuilder('cmpl-1', 1, 'openai/gpt-3.5-turbo-instruct', false);
  const logprobs = { tokens: [' Hi'], token_logprobs: [-0.5], top_logprobs: [{ ' Hi': -0.5 }], text_offset: [0] };
  const chunk = JSON.parse(builder.choice(1, ' Hi', logprobs, null).slice(6));
  assert.deepEqual(chunk.choices, [{ text: ' Hi', index: 1, logprobs, finish_reason: null }]);
});

test('the usage chunk writes exactly what JSON.stringify writes, for any numbers', () => {
  const number = fc.oneof(fc.nat(), fc.integer(), fc.double(), fc.constantFrom(0, -0, NaN, Infinity, -Infinity, Number.MAX_VALUE, 2 ** 53));
  const usage = fc.record({
    prompt_tokens: number, completion_tokens: number, total_tokens: number,
    completion_tokens_details: fc.record({ accepted_prediction_tokens: number, audio_tokens: number, reasoning_tokens: number, rejected_prediction_tokens: number }),
    prompt_tokens_details: fc.record({ audio_tokens: number, cached_tokens: number }),
  });
  fc.assert(fc.property(usage, (each) => usageJson(each) === JSON.stringify(each)), { numRuns: 5_000 });
});

test('the non-stream answer writes exactly what JSON.stringify writes, and is ASCII when said to be', () => {
  const number = fc.oneof(fc.nat(), fc.integer(), fc.double(), fc.constantFrom(0, -0, NaN, Infinity, -Infinity, 2 ** 53));
  const count = fc.oneof(fc.nat(), fc.constantFrom(NaN, Infinity));
  const usage = fc.record({
    prompt_tokens: count, completion_tokens: count, total_tokens: count,
    completion_tokens_details: fc.record({ accepted_prediction_tokens: count, audio_tokens: count, reasoning_tokens: count, rejected_prediction_tokens: count }),
    prompt_tokens_details: fc.record({ audio_tokens: count, cached_tokens: count }),
  });
  const logprobs = fc.record({
    tokens: fc.array(anyText, { maxLength: 3 }),
    token_logprobs: fc.array(fc.oneof(fc.constant(null), fc.double()), { maxLength: 3 }),
    top_logprobs: fc.array(fc.oneof(fc.constant(null), fc.dictionary(anyText, fc.double(), { maxKeys: 2 })), { maxLength: 3 }),
    text_offset: fc.array(fc.nat(), { maxLength: 3 }),
  });
  const choice = fc.record({
    text: anyText,
    index: number,
    logprobs: fc.oneof(fc.constant(null), logprobs),
    finish_reason: fc.constantFrom(null, 'stop', 'length', 'content_filter'),
  });
  const completion = fc.record(
    {
      id: anyText,
      object: fc.constant('text_completion' as const),
      created: number,
      model: anyText,
      system_fingerprint: fc.oneof(fc.constant(null), anyText),
      choices: fc.array(choice, { maxLength: 4 }),
      usage: fc.oneof(fc.constant(null), usage),
    },
    { requiredKeys: ['id', 'object', 'created', 'model', 'system_fingerprint', 'choices'] },
  );
  fc.assert(fc.property(completion, (each) => {
    const { text, ascii } = completionJson(each as Completion);
    assert.equal(text, JSON.stringify(each));
    if (ascii) assert.match(text, /^[\x00-\x7f]*$/);
    else assert.doesNotMatch(text, /^[\x00-\x7f]*$/);
  }), { numRuns: 5_000 });
});
