/**
 * Server-sent events on a raw Node response: data events, `: ping` keep-alives when silent,
 * backpressure (a slow reader pauses the producer instead of growing a buffer), the error event
 * in the one error shape, and the two-line ending both SDK families accept.
 *
 * Writes are corked and released once per tick, so the headers travel with the first event and
 * the events produced from one upstream chunk leave in one socket write.
 */
import type { ServerResponse } from 'node:http';
import { toErrorResponse } from './error-mapper.js';

/** `event: done` first for the SGP SDK (which ignores named events), then `[DONE]` for the OpenAI SDKs. */
const DONE = 'event: done\ndata: [DONE]\n\n';

export class SseWriter {
  private readonly response: ServerResponse;
  private readonly headers: Record<string, string>;
  private started = false;
  private lastWriteAt: number;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private corked = false;
  /** The last write filled the socket's buffer: wait for `drain` before producing more. */
  private blocked = false;
  private readonly uncork = () => {
    this.corked = false;
    this.response.uncork();
  };

  constructor(response: ServerResponse, headers: Record<string, string>, keepAliveIntervalMs: number) {
    this.response = response;
    this.headers = headers;
    this.timer = setInterval(() => this.keepAlive(keepAliveIntervalMs), Math.max(50, Math.floor(keepAliveIntervalMs / 3)));
    this.timer.unref();
    this.lastWriteAt = performance.now();
    response.once('close', () => {
      this.closed = true;
      this.stop();
    });
  }

  get headersSent(): boolean {
    return this.started;
  }

  /** Sets the status line and headers; they leave with the first write. */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.response.writeHead(200, {
      ...this.headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
    });
  }

  /** Queues one `data:` event; call `drained()` after a batch to honour backpressure. */
  send(json: string): void {
    this.put(`data: ${json}\n\n`);
  }

  /** Writes one `data:` event; resolves when the client can take more (backpressure). */
  async data(json: string): Promise<void> {
    this.send(json);
    await this.drained();
  }

  /** Writes the error event in the OpenAI error shape and ends the stream. */
  async error(error: unknown): Promise<void> {
    const { body } = toErrorResponse(error);
    this.put(`data: ${JSON.stringify(body)}\n\n`);
    await this.drained();
    this.end();
  }

  async done(): Promise<void> {
    this.put(DONE);
    await this.drained();
    this.end();
  }

  end(): void {
    this.stop();
    if (!this.response.writableEnded) {
      if (!this.started && !this.response.headersSent) this.start();
      this.response.end();
    }
  }

  /** Resolves once the socket took what was written (at once unless the client reads slowly). */
  drained(): Promise<void> | void {
    if (!this.blocked) return;
    return new Promise<void>((resolve) => {
      const done = () => {
        this.blocked = false;
        this.response.off('drain', done);
        this.response.off('close', done);
        resolve();
      };
      this.response.on('drain', done);
      this.response.on('close', done);
    });
  }

  private put(text: string): void {
    if (this.closed || this.response.writableEnded || this.response.destroyed) return;
    this.start();
    this.lastWriteAt = performance.now();
    if (!this.corked) {
      this.corked = true;
      this.response.cork();
      process.nextTick(this.uncork);
    }
    if (!this.response.write(text)) this.blocked = true;
  }

  private keepAlive(intervalMs: number): void {
    if (this.closed || this.response.writableEnded) return;
    if (performance.now() - this.lastWriteAt < intervalMs) return;
    this.start();
    this.lastWriteAt = performance.now();
    // A comment line: ignored by every SSE parser, keeps proxies and 60 s client timeouts from firing.
    this.response.write(': ping\n\n');
  }

  private stop(): void {
    if (this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }
}
