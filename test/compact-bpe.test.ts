/**
 * The compact encoder the gateway meters with (src/tokenizer/compact-bpe.ts) gives the same tokens
 * as gpt-tokenizer for any text, for both encodings it serves, special-token text included.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import fc from 'fast-check';
import { loadBpeRanks, tokenTableFile } from '../src/tokenizer/bpe-ranks.js';
import { compactBpe, CompactEncoder, writeCompactTable } from '../src/tokenizer/compact-bpe.js';
import { countTokens, encodeText } from '../src/tokenizer/tokenizer.js';

const require = createRequire(import.meta.url);
const noSpecial = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };
type LibraryEncode = (text: string, options?: object) => number[];
const libraries = {
  cl100k_base: (require('gpt-tokenizer/cjs/encoding/cl100k_base') as { encode: LibraryEncode }).encode,
  o200k_base: (require('gpt-tokenizer/cjs/encoding/o200k_base') as { encode: LibraryEncode }).encode,
};

// Text the way prompts come: words in several scripts, digits, punctuation, whitespace runs,
// contractions, code, emoji, special-token text, lone surrogates, and now and then any character at all.
const fragments = fc.oneof(
  fc.constantFrom(
    ' ',
    '  ',
    '\n',
    '\n\n',
    '\r\n',
    '\t',
    ' \n ',
    "'s",
    "'LL",
    "n't",
    '<|endoftext|>',
    '<|fim_prefix|>',
    '<|im_start|>',
    '\uD800',
    'x\uDC00',
    '🚀',
    '👩‍💻',
    'é',
    'e\u0301',
    '東京',
    'Ωμέγα',
    'עברית',
    'नमस्ते',
    '{"a": [1, 2]}',
    '=>',
    '...',
    '—',
    '\u0000',
  ),
  fc.stringMatching(/^[A-Za-z]{1,12}$/),
  fc.stringMatching(/^[0-9]{1,9}$/),
  fc.stringMatching(/^[ -~]{1,20}$/),
  fc.string({ unit: 'grapheme', maxLength: 6 }),
);
const texts = fc.array(fragments, { maxLength: 40 }).map((parts) => parts.join(''));

for (const name of ['cl100k_base', 'o200k_base'] as const) {
  test(`${name}: the compact encoder's tokens are gpt-tokenizer's, for generated text`, () => {
    const ours = compactBpe(name);
    const theirs = libraries[name];
    fc.assert(
      fc.property(texts, (text) => {
        const expected = theirs(text, noSpecial);
        assert.deepEqual(ours.encode(text), expected);
        assert.equal(ours.count(text), expected.length);
      }),
      { numRuns: 400 },
    );
  });

  test(`${name}: long pieces, every byte value and the empty text encode as the library's`, () => {
    const ours = compactBpe(name);
    const theirs = libraries[name];
    const everyCharacter = Array.from({ length: 0x250 }, (_, code) => String.fromCharCode(code)).join('');
    for (const text of ['', 'a'.repeat(3000), 'ab'.repeat(700), '9'.repeat(100), `${' '.repeat(300)}x`, everyCharacter, '\u{10FFFF}\u{1F600}x\uFFFD']) {
      assert.deepEqual(ours.encode(text), theirs(text, noSpecial), JSON.stringify(text.slice(0, 20)));
    }
  });
}

test('the cl100k counter the gateway meters with is the compact one, and agrees with the library', () => {
  const text = 'The quick brown fox <|endoftext|> jumps over 12345 lazy dogs.\n\n  indented';
  assert.equal(countTokens(text), libraries.cl100k_base(text, noSpecial).length);
  assert.deepEqual(encodeText(text), libraries.cl100k_base(text, noSpecial));
  assert.equal(countTokens(''), 0);
});

test('a table made in memory from the rank table (no table file) counts as the file does', () => {
  const pattern = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;
  const fromRanks = new CompactEncoder(writeCompactTable(loadBpeRanks('cl100k_base')), pattern);
  const fromFile = new CompactEncoder(readFileSync(tokenTableFile('cl100k_base', 'bpe')), pattern);
  const text = 'Ünïcödé and ASCII, 12345 digits, 🚀 and <|endoftext|>';
  assert.deepEqual(fromRanks.encode(text), fromFile.encode(text));
  assert.ok(fromFile.count(text) > 10);
});

test('a truncated table file is refused instead of giving wrong counts', () => {
  const file = readFileSync(tokenTableFile('cl100k_base', 'bpe'));
  const pattern = /\S+|\s+/gu;
  assert.doesNotThrow(() => new CompactEncoder(file, pattern));
  assert.throws(() => new CompactEncoder(file.subarray(0, file.length - 10), pattern), /truncated or corrupt/);
});
