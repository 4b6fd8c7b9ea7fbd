/**
 * HTTP to one vendor: an undici Agent keeps one keep-alive Pool per upstream origin, reused across
 * requests, with connect and idle timeouts. `open` returns 2xx responses only; anything else is
 * already a VendorError. The caller's signal aborts the request (the socket is destroyed, never
 * returned half-read to the pool).
 */
import { EventEmitter } from 'node:events';
import { Agent, type Dispatcher } from 'undici';
import { reportUpstreamCall } from '../../observability/upstream-events.js';
import { VendorError } from '../vendor-error.js';
import { abortReason } from './abort.js';
import { malformedUpstream, mapTransportError, mapUpstreamStatus, parseRetryAfter } from './map-upstream-error.js';
import type { TransportOptions } from './transport-options.js';

export type ResponseBody = Dispatcher.ResponseData['body'];
export type ResponseHeaders = Record<string, string | string[] | undefined>;

export interface UpstreamRequest {
  url: URL;
  headers: Record<string, string>;
  body: unknown;
  /** Streams use the idle timeout for headers too; non-stream calls wait up to responseTimeoutMs. */
  streaming: boolean;
  signal: AbortSignal;
  /** The model name, for 404 messages. */
  model: string;
}

export interface UpstreamResponse {
  status: number;
  headers: ResponseHeaders;
  body: ResponseBody;
  /** The whole-answer deadline, cleared once the body is read (or a stream's first event came). */
  deadline?: Deadline;
}

/** What a vendor's error body says, in that vendor's format. */
export interface ExtractedError {
  message: string | null;
  /** Set when the vendor's body tells a truer status than its HTTP status (Gemini's invalid-key 400). */
  status?: number;
  retryAfterSeconds?: number | null;
}

export interface UpstreamClientOptions {
  vendor: string;
  transport: TransportOptions;
  /** The env variable holding the key (for credential error messages), or null for keyless vendors. */
  credentialVariable: string | null;
  secrets: readonly string[];
  extractError(bodyText: string): ExtractedError;
}

const errorBodyLimit = 64 * 1024;

export class UpstreamClient {
  private readonly agent: Agent;

  constructor(private readonly options: UpstreamClientOptions) {
    const { transport } = options;
    this.agent = new Agent({
      connect: { timeout: transport.connectTimeoutMs },
      connections: transport.maxConnectionsPerOrigin,
      keepAliveTimeout: 30_000,
      headersTimeout: transport.responseTimeoutMs,
      bodyTimeout: transport.idleTimeoutMs,
    });
  }

  get vendor(): string {
    return this.options.vendor;
  }

  async open(request: UpstreamRequest): Promise<UpstreamResponse> {
    const { transport, vendor } = this.options;
    // Idle timeouts reset on every byte, so a slow drip would never trip them: a second, whole-answer
    // deadline bounds a non-stream call (headers + body) and a stream's wait for its first event.
    const deadline = new Deadline(transport.responseTimeoutMs, () => new VendorError(`The '${vendor}' vendor timed out (waiting for an answer).`, { vendor, status: 504, code: 'upstream_timeout', retryable: true }), request.signal);
    const signal = deadline.signal;
    let response: Dispatcher.ResponseData;
    try {
      const target = targetOf(request.url);
      response = await this.agent.request({
        origin: target.origin,
        path: target.path,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: request.streaming ? 'text/event-stream' : 'application/json', ...request.headers },
        body: JSON.stringify(request.body),
        signal,
        headersTimeout: request.streaming ? transport.idleTimeoutMs : transport.responseTimeoutMs,
        bodyTimeout: transport.idleTimeoutMs,
      });
    } catch (error) {
      deadline.release();
      if (request.signal.aborted) throw abortReason(request.signal);
      if (deadline.expired) throw deadline.error;
      throw mapTransportError(vendor, error);
    }
    if (response.statusCode >= 200 && response.statusCode < 300) return { status: response.statusCode, headers: response.headers, body: response.body, deadline };
    const text = await readLimited(response.body, errorBodyLimit).catch(() => '');
    deadline.release();
    if (request.signal.aborted) throw abortReason(request.signal);
    const extracted = safeExtract(this.options.extractError, text);
    throw this.failure(extracted.status ?? response.statusCode, extracted.message, request.model, parseRetryAfter(response.headers) ?? extracted.retryAfterSeconds ?? null);
  }

  /** The mapped error for an upstream status; also for errors a vendor reports inside a stream. */
  failure(status: number, message: string | null, model: string, retryAfterSeconds: number | null = null): VendorError {
    return mapUpstreamStatus({
      vendor: this.options.vendor,
      status,
      message,
      model,
      retryAfterSeconds,
      credentialVariable: this.options.credentialVariable,
      secrets: this.options.secrets,
    });
  }

  /** Reads a whole (non-stream) body as text, at most `maxResponseBytes`, mapping transport failures. */
  readText(response: UpstreamResponse, signal: AbortSignal): Promise<string> {
    const limit = this.options.transport.maxResponseBytes;
    const body = response.body;
    // Events rather than an async iterator: one closure per body instead of a promise per chunk.
    return new Promise<string>((resolve, reject) => {
      const parts: Buffer[] = [];
      let size = 0;
      let settled = false;
      const settle = (error: unknown, text?: string) => {
        if (settled) return;
        settled = true;
        // A late error (the abort that destroys the body) must not go unhandled.
        body.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose).on('error', ignore);
        response.deadline?.release();
        if (!body.destroyed) body.destroy();
        if (error === null) return resolve(text!);
        if (signal.aborted) return reject(abortReason(signal));
        if (response.deadline?.expired) return reject(response.deadline.error);
        reject(error instanceof VendorError ? error : mapTransportError(this.options.vendor, error));
      };
      const onData = (chunk: Buffer) => {
        size += chunk.length;
        if (size > limit) return settle(malformedUpstream(this.options.vendor, `an answer larger than ${limit} bytes`));
        parts.push(chunk);
      };
      const onEnd = () => settle(null, parts.length === 1 ? parts[0].toString('utf8') : Buffer.concat(parts).toString('utf8'));
      const onError = (error: unknown) => settle(error);
      // Destroyed without an error (an abort the stream did not report): not an answer.
      const onClose = () => settle(new Error('the response body closed before its end'));
      body.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
    });
  }

  /**
   * The body as chunks, mapping transport failures; stopping early destroys the socket. The
   * whole-answer deadline ends at the first chunk carrying an SSE `data:` field (comments do not count).
   */
  async *chunks(response: UpstreamResponse, signal: AbortSignal): AsyncGenerator<Buffer> {
    try {
      for await (const chunk of response.body) {
        if (response.deadline && !response.deadline.cleared && (chunk as Buffer).includes('data:')) response.deadline.clear();
        yield chunk as Buffer;
      }
    } catch (error) {
      if (signal.aborted) throw abortReason(signal);
      if (response.deadline?.expired) throw response.deadline.error;
      if (error instanceof VendorError) throw error;
      throw mapTransportError(this.options.vendor, error);
    } finally {
      response.deadline?.release();
      if (!response.body.destroyed) response.body.destroy();
    }
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => this.agent.destroy());
  }
}

// URL getters build strings on every read; adapters reuse URL objects, so split each one once.
const targets = new WeakMap<URL, { origin: string; path: string }>();
function targetOf(url: URL): { origin: string; path: string } {
  let target = targets.get(url);
  if (!target) {
    target = { origin: url.origin, path: `${url.pathname}${url.search}` };
    targets.set(url, target);
  }
  return target;
}

const ignore = () => {};

async function readLimited(body: ResponseBody, limit: number): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    parts.push(chunk as Buffer);
    size += (chunk as Buffer).length;
    if (size >= limit) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(parts).toString('utf8').slice(0, limit);
}

function safeExtract(extract: (text: string) => ExtractedError, text: string): ExtractedError {
  try {
    return extract(text);
  } catch {
    return { message: null };
  }
}

/**
 * A one-shot, unref'd timer that aborts the upstream request with a timeout VendorError; it also
 * follows `parent` (the client's signal). undici accepts an EventEmitter with `aborted`/`reason` as
 * a request signal, which costs far less per call than an AbortController and its EventTarget.
 */
export class Deadline extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;
  private timer: NodeJS.Timeout | null;
  private failure: VendorError | null = null;
  private readonly parent: AbortSignal | null;
  private readonly onParentAbort = () => this.abort(this.parent!.reason);

  constructor(milliseconds: number, makeError: () => VendorError, parent: AbortSignal | null = null) {
    super();
    this.parent = parent;
    if (parent?.aborted) this.abort(parent.reason);
    else parent?.addEventListener('abort', this.onParentAbort, { once: true });
    this.timer = setTimeout(() => {
      this.timer = null;
      this.failure = makeError();
      this.abort(this.failure);
    }, milliseconds);
    this.timer.unref();
  }

  /** What undici listens to (`abort` event, `aborted`, `reason`). */
  get signal(): EventEmitter {
    return this;
  }

  get expired(): boolean {
    return this.failure !== null;
  }

  get cleared(): boolean {
    return this.timer === null;
  }

  get error(): VendorError {
    return this.failure!;
  }

  /** Stops the timer; the signal keeps following the parent (a stream body still needs client aborts). */
  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Done with the request entirely: detach from the parent signal too. */
  release(): void {
    this.clear();
    this.parent?.removeEventListener('abort', this.onParentAbort);
  }

  private abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }
}
