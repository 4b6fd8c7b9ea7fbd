/**
 * The rank tables the gateway reads as JSON (scripts/build-token-ranks.js, bpe-ranks.ts) are the
 * ones gpt-tokenizer ships, and counts over them are the library's own.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { loadBpeRanks } from '../src/tokenizer/bpe-ranks.js';
import { cl100kRanks, countTokens, decodeTokens, encodeText } from '../src/tokenizer/tokenizer.js';
import { openaiExactCounter } from '../src/vendors/openai/openai-adapter.js';

const require = createRequire(import.meta.url);
const texts = [
  'hello world',
  'The quick brown fox jumps over the lazy dog.\n\n  indented\tand tabbed',
  'naïve café — 東京 🚀 emoji, Ωμέγα, עברית',
  '{"json": [1, 2.5e-3, null], "key": "value"}',
  'a'.repeat(5000),
  '\u0000\u0001 control \r\n',
];

for (const name of ['cl100k_base', 'o200k_base'] as const) {
  test(`${name}: the JSON table the gateway reads equals gpt-tokenizer's own`, () => {
    const ours = loadBpeRanks(name);
    const theirs = (require(`gpt-tokenizer/cjs/bpeRanks/${name}`) as { default: unknown[] }).default;
    assert.equal(ours.length, theirs.length);
    assert.deepEqual(ours, theirs);
  });
}

test('cl100k counts match the library encoding text for text', () => {
  const library = require('gpt-tokenizer/cjs/encoding/cl100k_base') as { encode(text: string): number[] };
  for (const text of texts) assert.equal(countTokens(text), library.encode(text).length, text.slice(0, 30));
});

test('o200k counts (gpt-4o family) match the library, and special-token text counts as text instead of throwing', () => {
  const library = require('gpt-tokenizer/cjs/encoding/o200k_base') as { encode(text: string, options?: object): number[] };
  const count = openaiExactCounter('gpt-4o')!;
  assert.ok(count);
  for (const text of texts) assert.equal(count(text), library.encode(text).length, text.slice(0, 30));
  // The library's default refuses special-token text; a prompt may well contain it.
  const withSpecial = 'before <|endoftext|> after';
  assert.throws(() => library.encode(withSpecial));
  assert.equal(count(withSpecial), library.encode(withSpecial, { allowedSpecial: new Set(), disallowedSpecial: new Set() }).length);
  assert.ok(count(withSpecial) > 3);
});

test('a token prompt that ends inside a character decodes to U+FFFD, and nothing of it reaches the next decode', () => {
  // cl100k_base holds every byte as a token; 0xC3 alone starts a two-byte character (é is C3 A9).
  const leadByte = cl100kRanks().findIndex((rank) => typeof rank !== 'string' && rank.length === 1 && rank[0] === 0xc3);
  assert.ok(leadByte >= 0);
  assert.equal(decodeTokens([...encodeText('caf'), leadByte]), 'caf\ufffd');
  assert.equal(decodeTokens(encodeText('abc')), 'abc');
  assert.equal(decodeTokens([leadByte, ...encodeText('\u00a9')]), '\ufffd\u00a9');
  assert.equal(decodeTokens(encodeText('naïve café')), 'naïve café');
});
