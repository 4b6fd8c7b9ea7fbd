import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CallPart } from '../src/vendors/shared/call-part.js';
import { decodeSseBody, type EventDecoder } from '../src/vendors/shared/decode-sse-body.js';
import { VendorError } from '../src/errors/vendor-error.js';

/** A body of the given reads that records whether it was closed (what ends the upstream request). */
function body(reads: (string | Error)[]): AsyncIterableIterator<Buffer> & { closed: boolean; handedOut: number } {
  let index = 0;
  const source = {
    closed: false,
    handedOut: 0,
    [Symbol.asyncIterator]() {
      return source;
    },
    async next(): Promise<IteratorResult<Buffer>> {
      if (source.closed || index >= reads.length) return { value: undefined, done: true };
      const read = reads[index++];
      if (read instanceof Error) throw read;
      source.handedOut++;
      return { value: Buffer.from(read), done: false };
    },
    async return(): Promise<IteratorResult<Buffer>> {
      source.closed = true;
      return { value: undefined, done: true };
    },
  };
  return source;
}

/** Each `data:` becomes a text part; `boom` throws; the end adds a finish part. */
const decoder: EventDecoder = {
  event(event, out: CallPart[]) {
    if (event.data === 'boom') throw new Error('error event');
    out.push({ type: 'text-delta', choice: 0, text: event.data });
  },
  end(out: CallPart[]) {
    out.push({ type: 'finish', choice: 0, finishReason: 'stop' });
  },
};

const texts = (batch: CallPart[]) => batch.map((part) => (part.type === 'text-delta' ? part.text : part.type));

test('one batch per read, events split across reads joined, the closing parts last', async () => {
  const batches: string[][] = [];
  for await (const batch of decodeSseBody('test', body(['data: a\n\ndata: b\n\n', 'data: c', '\n\n', ': comment\n\n']), decoder)) batches.push(texts(batch));
  assert.deepEqual(batches, [['a', 'b'], ['c'], ['finish']]);
});

test('a failing event: the parts decoded before it come out first, then the error, and the body is closed', async () => {
  const source = body(['data: a\n\ndata: boom\n\ndata: never\n\n', 'data: later\n\n']);
  const iterator = decodeSseBody('test', source, decoder);
  assert.deepEqual(texts((await iterator.next()).value as CallPart[]), ['a']);
  await assert.rejects(iterator.next(), /error event/);
  assert.equal(source.closed, true);
  assert.equal(source.handedOut, 1, 'nothing more was read after the failure');
  assert.equal((await iterator.next()).done, true);
});

test('leaving early closes the body; a body failure comes through as it is', async () => {
  const source = body(['data: a\n\n', 'data: b\n\n']);
  for await (const batch of decodeSseBody('test', source, decoder)) {
    assert.deepEqual(texts(batch), ['a']);
    break;
  }
  assert.equal(source.closed, true);
  const failing = decodeSseBody('test', body(['data: a\n\n', new Error('socket reset')]), decoder);
  assert.deepEqual(texts((await failing.next()).value as CallPart[]), ['a']);
  await assert.rejects(failing.next(), /socket reset/);
  assert.equal((await failing.next()).done, true);
});

test('a character split across two reads arrives whole; a last event without its blank line still counts', async () => {
  const bytes = Buffer.from('data: é😀\n\ndata: end');
  const split = [bytes.subarray(0, 7), bytes.subarray(7, 10), bytes.subarray(10)];
  const batches: string[][] = [];
  for await (const batch of decodeSseBody('test', bodyOf(split), decoder)) batches.push(texts(batch));
  assert.deepEqual(batches, [['é😀'], ['end', 'finish']]);
});

test('a broken event stream: the events before the break come out first, then a 502 naming the vendor', async () => {
  const source = body(['data: a\n\n<html>\ndata: never\n\n', 'data: later\n\n']);
  const iterator = decodeSseBody('acme', source, decoder);
  assert.deepEqual(texts((await iterator.next()).value as CallPart[]), ['a']);
  await assert.rejects(
    iterator.next(),
    (error: unknown) =>
      error instanceof VendorError &&
      error.status === 502 &&
      error.code === 'upstream_malformed' &&
      /'acme' vendor sent an unreadable event stream/.test(error.message),
  );
  assert.equal(source.closed, true);
});

/** A body of the given raw reads. */
async function* bodyOf(reads: Buffer[]): AsyncGenerator<Buffer> {
  for (const read of reads) yield read;
}
