/**
 * Server-sent events on a raw Node response: data events, `: ping` keep-alives when silent,
 * backpressure (a slow reader pauses the producer instead of growing a buffer), the error event
 * in the one error shape, and the two-line ending both SDK families accept.
 *
 * Events are collected in a string and leave in one `write` per event-loop turn (one chunk of the
 * chunked encoding instead of one per event), from a setImmediate after the batch that queued them;
 * when the stream ends in the same turn, everything leaves with the end of the response in one
 * socket write (with a `content-length` when nothing left before). The headers travel with the
 * first of them. Keep-alives come from one shared timer per interval, not one timer per stream.
 *
 * A batch whose events were all declared ASCII leaves as latin1: the same bytes as UTF-8, but the
 * chunked encoding's length is the string's length and the copy is a plain one, where UTF-8 had
 * Node measure the batch (`Buffer.byteLength`) and then encode it, a character at a time each.
 */
import type { ServerResponse } from 'node:http';
import { endInOneWrite } from './end-in-one-write.js';
import { toErrorResponse } from '../errors/error-mapper.js';

/** `event: done` first for the SGP SDK (which ignores named events), then `[DONE]` for the OpenAI SDKs. */
const DONE = 'event: done\ndata: [DONE]\n\n';

export class SseWriter {
  private readonly response: ServerResponse;
  private readonly headers: Record<string, string>;
  private readonly keepAliveIntervalMs: number;
  private started = false;
  private lastWriteAt: number;
  private closed = false;
  private pending = '';
  /** Everything in `pending` was declared ASCII. */
  private pendingAscii = true;
  /** Something was queued: the response is committed to 200 (errors become error events). */
  private output = false;
  private flushScheduled: NodeJS.Immediate | null = null;
  /** The producer finished: what is queued leaves with the end of the response (`holdForEnd`). */
  private holding = false;
  private readonly flushPending = () => {
    this.flushScheduled = null;
    this.writePending();
  };
  /** The last write filled the socket's buffer: wait for `drain` before producing more. */
  private blocked = false;
  /** This writer's place in its keep-alive group (see `watch`), or -1 when it is not in one. */
  keepAliveSlot = -1;
  /** Producers waiting in `drained()` for the socket to drain. */
  private waiters: (() => void)[] = [];
  /** Registered at the write that filled the buffer, so a drain that comes before anyone waits is not missed. */
  private readonly onDrain = () => {
    this.blocked = false;
    const waiting = this.waiters;
    this.waiters = [];
    for (const resolve of waiting) resolve();
  };

  constructor(response: ServerResponse, headers: Record<string, string>, keepAliveIntervalMs: number) {
    this.response = response;
    this.headers = headers;
    this.keepAliveIntervalMs = keepAliveIntervalMs;
    this.lastWriteAt = performance.now();
    watch(this, keepAliveIntervalMs);
    response.once('close', () => {
      this.closed = true;
      unwatch(this, keepAliveIntervalMs);
      this.onDrain();
    });
  }

  /** True once any event was queued or written: from then on failures are error events, not HTTP errors. */
  get headersSent(): boolean {
    return this.started || this.output;
  }

  /** Sets the status line and headers; they leave with the first write. */
  start(): void {
    if (this.started) return;
    this.started = true;
    // The request's own header object gains the stream's headers: no `{ ...headers, more }` copy
    // (README, "Objects that outlive their request").
    const headers = this.headers;
    headers['content-type'] = 'text/event-stream; charset=utf-8';
    headers['cache-control'] = 'no-cache';
    headers['x-accel-buffering'] = 'no';
    this.response.writeHead(200, headers);
  }

  /**
   * Queues one whole event, already framed (`data: …\n\n`); `drained()` sends what is queued and
   * honours backpressure. `ascii`: the caller knows the event has no character above U+007F.
   */
  send(event: string, ascii = false): void {
    this.output = true;
    this.pending += event;
    if (!ascii) this.pendingAscii = false;
  }

  /** Writes the error event in the OpenAI error shape and ends the stream. */
  async error(error: unknown): Promise<void> {
    const { body } = toErrorResponse(error);
    this.send(`data: ${JSON.stringify(body)}\n\n`);
    this.end();
  }

  async done(): Promise<void> {
    this.pending += DONE;
    this.end();
  }

  /**
   * Sends what is queued with the end of the response. When nothing has left yet, the whole body is
   * in hand: it goes with its `content-length` instead of the chunked encoding, one string written
   * after the headers where the chunked framing made a five-piece `writev` through the socket's
   * write queue (−2.7% CPU a 20-chunk stream in `compare-builds`).
   */
  end(): void {
    unwatch(this, this.keepAliveIntervalMs);
    const latin1 = this.pendingAscii;
    const text = this.take();
    if (this.response.writableEnded) return;
    const sending = text !== '' && !this.closed && !this.response.destroyed;
    if (!this.started && !this.response.headersSent) {
      this.headers['content-length'] = sending ? String(latin1 ? text.length : Buffer.byteLength(text)) : '0';
      this.start();
    }
    if (sending) endInOneWrite(this.response, text, latin1 ? 'latin1' : 'utf8');
    else this.response.end();
  }

  /**
   * Schedules what is queued to leave this turn; resolves at once unless an earlier write filled the
   * socket's buffer (a slow reader), then once it drained. So a producer is at most one batch ahead.
   */
  drained(): Promise<void> | void {
    if (this.pending && !this.flushScheduled && !this.holding) this.flushScheduled = setImmediate(this.flushPending);
    if (!this.blocked) return;
    return new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /**
   * The producer is done and only the closing events remain (usage, `[DONE]`, written once the
   * ledger committed, in the same event-loop pass on SQLite): what is still queued waits and
   * leaves with them in one socket write instead of two. An upstream that sent its whole answer
   * in one read (short or cached completions) is then one write end to end.
   */
  holdForEnd(): void {
    this.holding = true;
    if (!this.flushScheduled) return;
    clearImmediate(this.flushScheduled);
    this.flushScheduled = null;
  }

  /** Called by the shared timer: a comment line when nothing was written for a whole interval. */
  keepAlive(now: number): void {
    if (this.closed || this.response.writableEnded) return;
    if (now - this.lastWriteAt < this.keepAliveIntervalMs) return;
    if (this.pending) {
      // Held for the end (`holdForEnd`) for a whole interval: the ledger is slow, send the events now.
      this.writePending();
      return;
    }
    this.start();
    this.lastWriteAt = now;
    // A comment line: ignored by every SSE parser, keeps proxies and 60 s client timeouts from firing.
    this.response.write(': ping\n\n');
  }

  private writePending(): void {
    const encoding = this.pendingAscii ? 'latin1' : 'utf8';
    const text = this.take();
    if (!text || this.closed || this.response.writableEnded || this.response.destroyed) return;
    this.start();
    this.lastWriteAt = performance.now();
    if (!this.response.write(text, encoding) && !this.blocked) {
      this.blocked = true;
      this.response.once('drain', this.onDrain);
    }
  }

  private take(): string {
    const text = this.pending;
    this.pending = '';
    this.pendingAscii = true;
    return text;
  }
}

/**
 * Open writers by keep-alive interval, each group ticked by one unref'd timer. A group keeps its
 * writers in an array, each writer knowing its slot (removal moves the last writer into it), not
 * in a Set: a long-lived Set that requests are added to and deleted from kept whole requests
 * alive through young-generation GCs once a full GC had promoted its table (README, "Objects that
 * outlive their request").
 */
interface KeepAliveGroup {
  writers: SseWriter[];
  timer: NodeJS.Timeout;
}
const groups = new Map<number, KeepAliveGroup>();

function watch(writer: SseWriter, intervalMs: number): void {
  let group = groups.get(intervalMs);
  if (!group) {
    const writers: SseWriter[] = [];
    const timer = setInterval(() => {
      const now = performance.now();
      // Backwards: a writer that leaves during the walk is replaced by one already visited.
      for (let index = writers.length - 1; index >= 0; index--) writers[index]?.keepAlive(now);
    }, Math.max(50, Math.floor(intervalMs / 3)));
    timer.unref();
    group = { writers, timer };
    groups.set(intervalMs, group);
  }
  writer.keepAliveSlot = group.writers.length;
  group.writers.push(writer);
}

function unwatch(writer: SseWriter, intervalMs: number): void {
  const slot = writer.keepAliveSlot;
  const group = groups.get(intervalMs);
  if (slot < 0 || !group) return;
  writer.keepAliveSlot = -1;
  const last = group.writers.pop()!;
  if (last !== writer) {
    group.writers[slot] = last;
    last.keepAliveSlot = slot;
  }
  if (group.writers.length > 0) return;
  clearInterval(group.timer);
  groups.delete(intervalMs);
}
