/**
 * Server-sent events on a raw Node response: events, `: ping` keep-alives while the stream is
 * silent, backpressure (a slow reader pauses the producer instead of growing a buffer), the error
 * event in the one error shape, and the two-line ending both SDK families accept.
 */
import type { ServerResponse } from 'node:http';
import { toErrorResponse } from '../errors/error-mapper.js';

/** `event: done` first for the SGP SDK (which ignores named events), then `[DONE]` for the OpenAI SDKs. */
export const SSE_DONE = 'event: done\ndata: [DONE]\n\n';

export class SseWriter {
  /** The raw response the events are written to. */
  readonly response: ServerResponse;
  private readonly headers: Record<string, string>;
  private readonly keepAlive: NodeJS.Timeout;
  private lastWriteAt = performance.now();
  private readonly keepAliveIntervalMs: number;
  /** Writes are corked until the event loop's check phase (see `write`). */
  private corked = false;
  /** Every piece of text written, in order, when the constructor was given a list to keep it in. */
  private readonly transcript: string[] | null;

  // The keep-alive timer and the uncork run shared functions with the writer as their argument:
  // no closure per stream where the timer list reaches it (docs/performance.md, "Objects that outlive their request").
  constructor(response: ServerResponse, headers: Record<string, string>, keepAliveIntervalMs: number, transcript: string[] | null = null) {
    this.response = response;
    this.transcript = transcript;
    this.headers = headers;
    this.keepAliveIntervalMs = keepAliveIntervalMs;
    this.keepAlive = setInterval(keepAliveTick, Math.max(50, Math.floor(keepAliveIntervalMs / 3)), this);
    this.keepAlive.unref();
  }

  /** True once anything was written: from then on failures are error events, not HTTP errors. */
  get started(): boolean {
    return this.response.headersSent;
  }

  /** Writes events (already framed); resolves once the socket can take more. */
  async send(events: string): Promise<void> {
    if (this.write(events) || this.response.destroyed) return;
    await new Promise<void>((resolve) => {
      const resume = () => {
        this.response.off('drain', resume);
        this.response.off('close', resume);
        resolve();
      };
      this.response.once('drain', resume);
      this.response.once('close', resume);
    });
  }

  /** Writes the error event in the OpenAI error shape and ends the stream. */
  error(error: unknown): void {
    this.end(`data: ${JSON.stringify(toErrorResponse(error).body)}\n\n`);
  }

  /** Ends the stream with `[DONE]`. */
  done(): void {
    this.end(SSE_DONE);
  }

  /** Ends the response, with a last piece of text. */
  end(text = ''): void {
    this.stop();
    if (this.response.writableEnded || this.response.destroyed) return;
    this.start();
    this.transcript?.push(text);
    this.response.end(text);
  }

  /** Stops the keep-alives (the stream ended, or its response went away or was answered otherwise). */
  stop(): void {
    clearInterval(this.keepAlive);
  }

  /** A keep-alive tick: a comment line (ignored by every SSE parser) after a silent interval keeps proxies and 60 s client timeouts from firing. */
  ping(): void {
    if (this.response.writableEnded || this.response.destroyed) this.stop();
    else if (performance.now() - this.lastWriteAt >= this.keepAliveIntervalMs) this.write(': ping\n\n');
  }

  /** Sends what was corked in this pass of the event loop. */
  uncork(): void {
    this.corked = false;
    this.response.uncork();
  }

  /**
   * Events written during one pass of the event loop leave together: the response is corked at the
   * first and uncorked once the pass's I/O is handled (`setImmediate`), so upstream reads that
   * arrive together cost one socket write, not one each.
   */
  private write(text: string): boolean {
    if (this.response.writableEnded || this.response.destroyed) return true;
    this.start();
    this.transcript?.push(text);
    this.lastWriteAt = performance.now();
    if (!this.corked) {
      this.corked = true;
      this.response.cork();
      setImmediate(uncorkWriter, this);
    }
    return this.response.write(text);
  }

  /** Writes the status and the stream's headers (once; any first write does it too). */
  start(): void {
    if (this.response.headersSent) return;
    this.headers['content-type'] = 'text/event-stream; charset=utf-8';
    this.headers['cache-control'] = 'no-cache';
    this.headers['x-accel-buffering'] = 'no';
    this.response.writeHead(200, this.headers);
  }
}

function keepAliveTick(writer: SseWriter): void {
  writer.ping();
}

function uncorkWriter(writer: SseWriter): void {
  writer.uncork();
}
