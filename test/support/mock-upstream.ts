/**
 * A scripted HTTP server on 127.0.0.1 that plays a vendor: each incoming request takes the next
 * reply (or the fallback). Records every request (method, URL, headers, parsed body) and whether
 * the client closed the connection before the reply finished (abort detection).
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: any;
  /** The client's port: equal ports on consecutive requests mean a reused keep-alive connection. */
  remotePort: number | undefined;
  /** Resolves true when the client went away before the reply was complete. */
  closedEarly: Promise<boolean>;
}

export type Reply =
  | { status?: number; headers?: Record<string, string>; json: unknown }
  | { status?: number; headers?: Record<string, string>; text: string }
  /** Raw SSE body pieces written one by one (pieces may split events anywhere). */
  | { status?: number; headers?: Record<string, string>; chunks: string[]; delayMs?: number; hang?: boolean; destroyAfter?: boolean }
  /** Never answers (timeouts, non-stream aborts). */
  | { hang: true }
  /** The reply built from what the request asked (its prompt, its seed). */
  | { answer: (recorded: RecordedRequest) => Reply }
  /** Another reply, begun only after a pause (a slow vendor). */
  | { afterMs: number; reply: Reply }
  | ((request: IncomingMessage, response: ServerResponse, recorded: RecordedRequest) => void);

export function sse(data: unknown, event?: string): string {
  const payload = typeof data === 'string' ? data : JSON.stringify(data);
  return `${event ? `event: ${event}\n` : ''}data: ${payload}\n\n`;
}

/** What a request gets when no reply was scripted for it. */
const unscripted: Reply = { status: 500, json: { error: { message: 'no reply scripted' } } };

export class MockUpstream {
  readonly requests: RecordedRequest[] = [];
  private readonly replies: Reply[] = [];
  private fallback: Reply = unscripted;
  private readonly server: Server;
  private readonly timers = new Set<NodeJS.Timeout>();

  private constructor() {
    this.server = createServer((request, response) => this.handle(request, response));
    this.server.keepAliveTimeout = 5_000;
  }

  static async start(): Promise<MockUpstream> {
    const mock = new MockUpstream();
    await new Promise<void>((resolve) => mock.server.listen(0, '127.0.0.1', resolve));
    return mock;
  }

  get url(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  reply(...replies: Reply[]): this {
    this.replies.push(...replies);
    return this;
  }

  always(reply: Reply): this {
    this.fallback = reply;
    return this;
  }

  /** Forgets the recorded requests, the scripted replies and the `always` reply. */
  reset(): void {
    this.requests.length = 0;
    this.replies.length = 0;
    this.fallback = unscripted;
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const pieces: Buffer[] = [];
    request.on('data', (piece: Buffer) => pieces.push(piece));
    request.on('end', () => {
      const text = Buffer.concat(pieces).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // keep the raw text
      }
      let settle: (early: boolean) => void = () => undefined;
      const closedEarly = new Promise<boolean>((resolve) => (settle = resolve));
      response.on('close', () => settle(!response.writableFinished));
      const recorded: RecordedRequest = {
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body,
        remotePort: request.socket.remotePort,
        closedEarly,
      };
      this.requests.push(recorded);
      this.play(this.replies.shift() ?? this.fallback, request, response, recorded);
    });
  }

  private play(reply: Reply, request: IncomingMessage, response: ServerResponse, recorded: RecordedRequest): void {
    if (typeof reply === 'function') {
      reply(request, response, recorded);
      return;
    }
    if ('answer' in reply) return void this.play(reply.answer(recorded), request, response, recorded);
    if ('afterMs' in reply) return void setTimeout(() => this.play(reply.reply, request, response, recorded), reply.afterMs);
    if ('hang' in reply && !('chunks' in reply)) return;
    if ('json' in reply) {
      response.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
      return void response.end(JSON.stringify(reply.json));
    }
    if ('text' in reply) {
      response.writeHead(reply.status ?? 200, { 'content-type': 'text/plain', ...reply.headers });
      return void response.end(reply.text);
    }
    response.writeHead(reply.status ?? 200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...reply.headers });
    const chunks = [...reply.chunks];
    const next = () => {
      if (response.destroyed) return;
      const chunk = chunks.shift();
      if (chunk === undefined) {
        if (reply.destroyAfter) response.destroy();
        else if (!reply.hang) response.end();
        return;
      }
      response.write(chunk);
      const timer = setTimeout(next, reply.delayMs ?? 1);
      this.timers.add(timer);
    };
    next();
  }
}
