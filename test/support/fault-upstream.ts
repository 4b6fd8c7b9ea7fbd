/**
 * A misbehaving OpenAI-style upstream on 127.0.0.1 for the fault tests: one named fault at a time
 * (reset, hang, drip, 429, 5xx, invalid JSON, broken SSE, error-in-200, enormous bodies). It counts
 * its open sockets and the ones still carrying an unfinished reply, records every request (method,
 * path, host, headers) and how many body bytes it managed to push, so a test can prove the gateway
 * closed everything and stopped reading.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { openaiCompletions } from './vendor-wire.js';

export type Fault =
  | 'ok'
  | 'reset-before-headers'
  | 'reset-mid-stream'
  | 'hang'
  | 'drip'
  | 'drip-forever'
  | 'stall-after-headers'
  | '429'
  | '500'
  | '503'
  | 'invalid-json'
  | 'truncated'
  | 'malformed-sse'
  | 'error-200'
  | 'enormous'
  | 'fast-forever';

export interface FaultRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: any;
}

const healthy = { texts: [['Hello', ' world']], usage: { prompt: 3, completion: 2 } };
const completionJson = JSON.stringify(openaiCompletions.body(healthy));
/** The healthy stream's events: `Hello`, ` world`, the finish, the usage chunk and `[DONE]`. */
const healthyEvents = openaiCompletions.events(healthy);

const sseHeaders = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };
const jsonHeaders = { 'content-type': 'application/json' };

/** The SSE body of a healthy two-chunk completion. */
export const healthyStream = healthyEvents.join('');

export class FaultUpstream {
  fault: Fault = 'ok';
  readonly requests: FaultRequest[] = [];
  /** Body bytes written for the current fault (reset with `use`). */
  bytesWritten = 0;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly busy = new Set<ServerResponse>();
  private readonly timers = new Set<NodeJS.Timeout>();

  private constructor() {
    this.server = createServer((request, response) => this.handle(request, response));
    this.server.keepAliveTimeout = 5_000;
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  static async start(): Promise<FaultUpstream> {
    const upstream = new FaultUpstream();
    await new Promise<void>((resolve) => upstream.server.listen(0, '127.0.0.1', resolve));
    return upstream;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  use(fault: Fault): void {
    this.fault = fault;
    this.requests.length = 0;
    this.bytesWritten = 0;
  }

  /** Sockets open on this side (idle keep-alive ones included). */
  get openSockets(): number {
    return this.sockets.size;
  }

  /** Replies begun and not finished whose connection is still open: a leak if it stays above 0. */
  get busySockets(): number {
    return this.busy.size;
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.server.closeAllConnections();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private later(ms: number, action: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      action();
    }, ms);
    this.timers.add(timer);
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const pieces: Buffer[] = [];
    request.on('data', (piece: Buffer) => pieces.push(piece));
    request.on('end', () => {
      let body: any = null;
      try {
        body = JSON.parse(Buffer.concat(pieces).toString('utf8'));
      } catch {
        body = Buffer.concat(pieces).toString('utf8');
      }
      this.requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
      this.busy.add(response);
      response.once('close', () => this.busy.delete(response));
      this.play(this.fault, body?.stream === true, request, response);
    });
  }

  private write(response: ServerResponse, text: string | Buffer): boolean {
    if (response.destroyed) return false;
    this.bytesWritten += Buffer.byteLength(text);
    return response.write(text);
  }

  /** A 200 and the start of a healthy answer: the first chunk of a stream, 20 bytes of a JSON body. */
  private startAnswer(response: ServerResponse, stream: boolean): void {
    if (stream) {
      response.writeHead(200, sseHeaders);
      this.write(response, healthyEvents[0]);
    } else {
      response.writeHead(200, { ...jsonHeaders, 'content-length': String(completionJson.length) });
      this.write(response, completionJson.slice(0, 20));
    }
  }

  private play(fault: Fault, stream: boolean, request: IncomingMessage, response: ServerResponse): void {
    switch (fault) {
      case 'ok':
        response.writeHead(200, stream ? sseHeaders : jsonHeaders);
        return void response.end(stream ? healthyStream : completionJson);
      case 'reset-before-headers':
        return void request.socket.resetAndDestroy();
      case 'reset-mid-stream':
        this.startAnswer(response, stream);
        this.later(50, () => request.socket.resetAndDestroy());
        return;
      case 'hang':
        return;
      case 'drip': {
        // Every byte of a healthy answer, one at a time: slow, but each gap is short of the idle timeout.
        const text = stream ? healthyStream : completionJson;
        response.writeHead(200, stream ? sseHeaders : { ...jsonHeaders, 'content-length': String(text.length) });
        const bytes = Buffer.from(text);
        let index = 0;
        const step = () => {
          if (response.destroyed) return;
          if (index >= bytes.length) return void response.end();
          this.write(response, bytes.subarray(index, index + 8));
          index += 8;
          this.later(2, step);
        };
        step();
        return;
      }
      case 'drip-forever': {
        // A body that never ends: whitespace every 100 ms (valid JSON padding, SSE blank lines).
        response.writeHead(200, stream ? sseHeaders : jsonHeaders);
        const step = () => {
          if (response.destroyed) return;
          this.write(response, stream ? ': still here\n\n' : ' ');
          this.later(100, step);
        };
        step();
        return;
      }
      case 'stall-after-headers':
        // The headers and the start of the answer, then silence (the connection stays open).
        this.startAnswer(response, stream);
        return;
      case '429':
        response.writeHead(429, { ...jsonHeaders, 'retry-after': '1' });
        return void response.end(JSON.stringify(openaiCompletions.errorBody(429, 'Rate limit reached for requests')));
      case '500':
        response.writeHead(500, jsonHeaders);
        return void response.end(JSON.stringify(openaiCompletions.errorBody(500, 'The server had an error while processing your request.')));
      case '503':
        response.writeHead(503, { 'content-type': 'text/html' });
        return void response.end('<html><body>Service Unavailable</body></html>');
      case 'invalid-json':
        response.writeHead(200, stream ? sseHeaders : jsonHeaders);
        return void response.end(stream ? 'data: {"choices": [{"text": "Hel\n\ndata: [DONE]\n\n' : '{"choices": [{"text": "Hel');
      case 'truncated':
        if (stream) {
          response.writeHead(200, sseHeaders);
          // `Hello`, ` wor`, then the body ends in the middle of the next event.
          const [wor] = openaiCompletions.events({ texts: [[' wor']], usage: healthy.usage });
          return void response.end(`${healthyEvents[0]}${wor}${healthyEvents[1].slice(0, 30)}`);
        }
        response.writeHead(200, jsonHeaders);
        return void response.end(completionJson.slice(0, completionJson.length - 30));
      case 'malformed-sse':
        // Not an event stream at all: an HTML error page with a 200 and an SSE content type.
        response.writeHead(200, stream ? sseHeaders : jsonHeaders);
        return void response.end(stream ? '<html>\n<body>upstream proxy error</body>\n</html>\n' : '<html>upstream proxy error</html>');
      case 'error-200': {
        const error = JSON.stringify(openaiCompletions.errorBody(500, 'The model is overloaded'));
        response.writeHead(200, stream ? sseHeaders : jsonHeaders);
        return void response.end(stream ? `data: ${error}\n\n` : error);
      }
      case 'enormous': {
        // 256 MiB in 1 MiB pieces, honouring backpressure: as long as the gateway keeps reading.
        const piece = Buffer.alloc(1024 * 1024, stream ? 'x' : ' ');
        response.writeHead(200, stream ? sseHeaders : jsonHeaders);
        let sent = 0;
        if (stream) this.write(response, 'data: {"choices":[{"index":0,"text":"');
        else this.write(response, '{"choices":[{"index":0,"text":"');
        const pump = () => {
          while (!response.destroyed && sent < 256) {
            sent++;
            if (!this.write(response, piece)) return void response.once('drain', pump);
          }
          if (!response.destroyed) response.end('"}]}\n\n');
        };
        pump();
        return;
      }
      case 'fast-forever': {
        // A stream that pushes text as fast as the reader takes it and never finishes.
        response.writeHead(200, sseHeaders);
        const [chunk] = openaiCompletions.events({ texts: [['lorem ipsum dolor sit amet '.repeat(40)]], usage: null });
        const pump = () => {
          while (!response.destroyed) {
            if (!this.write(response, chunk)) return void response.once('drain', pump);
          }
        };
        pump();
        return;
      }
    }
  }
}

/** A port on 127.0.0.1 that refuses connections (listened on, then closed). */
export async function refusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
