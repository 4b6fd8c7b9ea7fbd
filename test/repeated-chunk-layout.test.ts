import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { CallPart } from '../src/vendors/shared/call-part.js';
import { completionStreamParts } from '../src/vendors/openai/parse-openai-completions.js';
import { chatStreamParts } from '../src/vendors/openai/parse-openai-chat.js';
import { anthropicStreamParts } from '../src/vendors/anthropic/parse-anthropic-response.js';
import { plainAscii, textKind } from '../src/vendors/shared/json-string.js';

type StreamParts = (vendor: string, body: AsyncIterable<Buffer>, choiceCount: number) => AsyncIterableIterator<CallPart[]>;

async function* reads(texts: string[]): AsyncGenerator<Buffer> {
  for (const text of texts) yield Buffer.from(text);
}

/** Every part a stream yields, in order, and the error it ended with (its message), if any. */
async function run(parts: StreamParts, events: string[], perRead = 3): Promise<{ parts: CallPart[]; error: string | null }> {
  const body: string[] = [];
  for (let index = 0; index < events.length; index += perRead) body.push(events.slice(index, index + perRead).map((data) => `data: ${data}\n\n`).join(''));
  const out: CallPart[] = [];
  try {
    for await (const batch of parts('test', reads(body), 0)) out.push(...batch.map(withoutHint));
  } catch (error) {
    return { parts: out, error: (error as Error).message };
  }
  return { parts: out, error: null };
}

/**
 * A part without its `plainAscii` hint, once the hint is checked: a delta read through a layout
 * says whether its text is plain ASCII, and must be right either way.
 */
function withoutHint(part: CallPart): CallPart {
  if (part.type !== 'text-delta' || part.plainAscii === undefined) return part;
  assert.equal(part.plainAscii, textKind(part.text) === plainAscii, JSON.stringify(part.text));
  const { plainAscii: _hint, ...rest } = part;
  return rest;
}

/**
 * What the stream must give: each chunk decoded alone (a stream of one chunk never reads a chunk
 * through a learned layout), the fingerprint once, usage the last one seen, at the end.
 */
async function reference(parts: StreamParts, events: string[]): Promise<{ parts: CallPart[]; error: string | null }> {
  const out: CallPart[] = [];
  let usage: CallPart | null = null;
  let fingerprint = false;
  for (const data of events) {
    if (data === '[DONE]') break;
    const alone = await run(parts, [data]);
    for (const part of alone.parts) {
      if (part.type === 'usage') usage = part;
      else if (part.type !== 'metadata' || !fingerprint) out.push(part);
      if (part.type === 'metadata') fingerprint = true;
    }
    if (alone.error !== null) return { parts: out, error: alone.error };
  }
  if (usage) out.push(usage);
  return { parts: out, error: null };
}

/** Text as an upstream might send it: mostly plain words, sometimes quotes, escapes, other scripts, emoji. */
const text = fc.oneof(
  { arbitrary: fc.constantFrom(' the', ' quick', ' brown', 'fox', '.', ' 42', '', ' jumps'), weight: 6 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 8 }), weight: 2 },
  { arbitrary: fc.constantFrom('"', '\\', '\n', 'a"b', '~probe~', '"text":"', 'é', '😀', '\u2028'), weight: 2 },
);

interface ChunkSpec {
  text: string;
  choice: number;
  /** How this chunk differs from the stream's usual layout. */
  change: 'none' | 'finish' | 'usage' | 'created' | 'escaped' | 'raw-control' | 'logprobs' | 'id-holds-text';
}

const chunkSpec = fc.record<ChunkSpec>({
  text,
  choice: fc.nat({ max: 2 }),
  change: fc.oneof(
    { arbitrary: fc.constant('none' as const), weight: 12 },
    { arbitrary: fc.constantFrom('finish' as const, 'usage' as const, 'created' as const, 'escaped' as const, 'raw-control' as const, 'logprobs' as const, 'id-holds-text' as const), weight: 3 },
  ),
});

/**
 * `JSON.stringify`, but every non-ASCII character and the letter e written as a \u escape. The
 * escapes `JSON.stringify` wrote stay whole (the e of `\u000e` is a hex digit, not a letter).
 */
function escapedJson(value: unknown): string {
  return JSON.stringify(value).replace(/\\(?:u[0-9a-f]{4}|.)|[^\x20-\x7e]|e/g, (match) => (match.length > 1 ? match : `\\u${match.charCodeAt(0).toString(16).padStart(4, '0')}`));
}

function completionChunk(spec: ChunkSpec, fingerprint: string | null): string {
  const choice = {
    text: spec.text,
    index: spec.choice,
    logprobs: spec.change === 'logprobs' ? { tokens: [spec.text], token_logprobs: [-0.5], top_logprobs: null } : null,
    finish_reason: spec.change === 'finish' ? 'stop' : null,
  };
  const chunk = {
    id: spec.change === 'id-holds-text' ? `cmpl-"${spec.text}"` : 'cmpl-1',
    object: 'text_completion',
    created: spec.change === 'created' ? 1_700_000_001 : 1_700_000_000,
    choices: [choice],
    model: 'm',
    ...(fingerprint ? { system_fingerprint: fingerprint } : {}),
    ...(spec.change === 'usage' ? { usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 } } : {}),
  };
  if (spec.change === 'escaped') return escapedJson(chunk);
  const data = JSON.stringify(chunk);
  return spec.change === 'raw-control' ? data.replace('"text":"', '"text":"\u0001') : data;
}

function chatChunk(spec: ChunkSpec, fingerprint: string | null): string {
  const chunk = {
    id: spec.change === 'id-holds-text' ? `chat-"${spec.text}"` : 'chat-1',
    object: 'chat.completion.chunk',
    created: spec.change === 'created' ? 1_700_000_001 : 1_700_000_000,
    model: 'm',
    ...(fingerprint ? { system_fingerprint: fingerprint } : {}),
    choices: [{ index: spec.choice, delta: { content: spec.text }, logprobs: null, finish_reason: spec.change === 'finish' ? 'stop' : null }],
    ...(spec.change === 'usage' ? { usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 } } : {}),
  };
  if (spec.change === 'escaped') return escapedJson(chunk);
  const data = JSON.stringify(chunk);
  return spec.change === 'raw-control' ? data.replace('"content":"', '"content":"\u0001') : data;
}

for (const [name, parts, chunk] of [['completions', completionStreamParts, completionChunk], ['chat', chatStreamParts, chatChunk]] as const) {
  test(`${name} streams: chunks read through a learned layout give exactly what parsing each gives, failures included`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(chunkSpec, { minLength: 1, maxLength: 30 }), fc.option(fc.constantFrom('fp_1', 'fp_"2"'), { nil: null }), fc.integer({ min: 1, max: 4 }), async (specs, fingerprint, perRead) => {
        const events = [...specs.map((spec) => chunk(spec, fingerprint)), '[DONE]'];
        assert.deepEqual(await run(parts, events, perRead), await reference(parts, events));
      }),
      { numRuns: 1_500 },
    );
  });
}

test('a stream whose chunks repeat their layout parses only the chunks that differ', async () => {
  const specs: ChunkSpec[] = Array.from({ length: 20 }, (_, index) => ({ text: index % 5 === 4 ? '\n\n' : ` word${index}`, choice: index % 2, change: 'none' }));
  specs.push({ text: '', choice: 0, change: 'finish' }, { text: '', choice: 1, change: 'finish' }, { text: '', choice: 0, change: 'usage' });
  const events = [...specs.map((spec) => completionChunk(spec, 'fp_1')), '[DONE]'];
  const parse = JSON.parse;
  let parsed = 0;
  JSON.parse = (...args: Parameters<typeof JSON.parse>) => {
    parsed++;
    return parse(...args);
  };
  let result;
  try {
    result = await run(completionStreamParts, events);
  } finally {
    JSON.parse = parse;
  }
  assert.equal(result.error, null);
  const texts = result.parts.flatMap((part) => (part.type === 'text-delta' ? [`${part.choice}:${part.text}`] : []));
  assert.deepEqual(texts, specs.slice(0, 20).map((spec) => `${spec.choice}:${spec.text}`));
  // The first chunk of each choice is parsed and its layout proved by parsing a probe (2 × 2),
  // the four texts with escapes (newlines) are parsed (their layout is not learned again), then
  // the three closing chunks: 11 in all, instead of 23.
  assert.equal(parsed, 11);
});

test('after a layout is learned, a chunk with a raw control character in its text is still refused', async () => {
  const events = [completionChunk({ text: 'a', choice: 0, change: 'none' }, null), completionChunk({ text: 'b', choice: 0, change: 'raw-control' }, null), '[DONE]'];
  const result = await run(completionStreamParts, events, 1);
  assert.deepEqual(result.parts, [{ type: 'text-delta', choice: 0, text: 'a' }]);
  assert.match(result.error ?? '', /not JSON/);
});

test('Anthropic streams: text deltas read through a learned layout give exactly what parsing each gives', async () => {
  const start = JSON.stringify({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude', usage: { input_tokens: 7, output_tokens: 1 } } });
  const stop = [JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } }), JSON.stringify({ type: 'message_stop' })];
  const delta = (spec: ChunkSpec): string => {
    const event = { type: 'content_block_delta', index: spec.choice, delta: { type: 'text_delta', text: spec.text } };
    if (spec.change === 'escaped') return escapedJson(event);
    const data = JSON.stringify(event);
    return spec.change === 'raw-control' ? data.replace('"text":"', '"text":"\u0001') : data;
  };
  const failure = (status: number, message: string | null) => new Error(`${status} ${message}`) as never;
  await fc.assert(
    fc.asyncProperty(fc.array(chunkSpec, { minLength: 1, maxLength: 30 }), fc.integer({ min: 1, max: 4 }), async (specs, perRead) => {
      const events = [start, ...specs.map(delta), ...stop];
      const parts = (vendor: string, body: AsyncIterable<Buffer>) => anthropicStreamParts(vendor, body, failure);
      const result = await run(parts, events, perRead);
      const broken = specs.findIndex((spec) => spec.change === 'raw-control');
      const sent = broken < 0 ? specs : specs.slice(0, broken);
      const texts = result.parts.flatMap((part) => (part.type === 'text-delta' ? [part.text] : []));
      assert.deepEqual(texts, sent.map((spec) => spec.text).filter((text) => text.length > 0));
      if (broken >= 0) assert.match(result.error ?? '', /not JSON/);
      else assert.deepEqual(result.parts.slice(-2).map((part) => part.type), ['finish', 'usage']);
    }),
    { numRuns: 1_000 },
  );
});
