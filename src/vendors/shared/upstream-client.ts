/**
 * HTTP to one vendor: an undici Agent keeps one keep-alive Pool per upstream origin, reused across
 * requests, with a connect timeout; the answer and idle limits are the exchange's Deadline
 * (upstream-deadline.ts). Requests go through undici's `dispatch` with our own handler
 * (upstream-exchange.ts): no stream, async resource or abort signal per call. `open`
 * returns 2xx responses only; anything else is already a VendorError. The caller's signal aborts
 * the request (the socket is destroyed, never returned half-read to the pool).
 */
import { Agent } from 'undici';
import { reportUpstreamCall } from '../../observability/upstream-events.js';
import { VendorError } from '../../errors/vendor-error.js';
import { abortReason } from './abort.js';
import { Deadline, type DeadlineLimits } from './upstream-deadline.js';
import { malformedUpstream, mapTransportError, mapUpstreamStatus, parseRetryAfter } from './map-upstream-error.js';
import type { TransportOptions } from './transport-options.js';
import { JsonBody } from './json-body.js';
import { UpstreamBodyChunks } from './upstream-body-chunks.js';
import { UpstreamExchange } from './upstream-exchange.js';

export type ResponseHeaders = Record<string, string | string[] | undefined>;

export interface UpstreamRequest {
  url: URL;
  headers: Record<string, string>;
  /** The JSON body: a `JsonBody` already written, or a value for `JSON.stringify`. */
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
  /** The exchange the body arrives on. */
  body: UpstreamExchange;
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
  private readonly answerLimits: DeadlineLimits;
  private readonly streamLimits: DeadlineLimits;

  constructor(private readonly options: UpstreamClientOptions) {
    const { transport, vendor } = options;
    this.answerLimits = { vendor, answerMs: transport.responseTimeoutMs, idleMs: transport.idleTimeoutMs, idleFromStart: false };
    this.streamLimits = { ...this.answerLimits, idleFromStart: true };
    this.agent = new Agent({
      connect: { timeout: transport.connectTimeoutMs },
      connections: transport.maxConnectionsPerOrigin,
      keepAliveTimeout: 30_000,
      // Off: the Deadline keeps both limits with one timer per request (see upstream-deadline.ts).
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  }

  get vendor(): string {
    return this.options.vendor;
  }

  async open(request: UpstreamRequest): Promise<UpstreamResponse> {
    const { vendor } = this.options;
    const started = performance.now();
    const exchange = new UpstreamExchange();
    const deadline = new Deadline(request.streaming ? this.streamLimits : this.answerLimits, request.signal, exchange);
    try {
      const target = targetOf(request.url);
      this.agent.dispatch({
        origin: target.origin,
        path: target.path,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: request.streaming ? 'text/event-stream' : 'application/json', ...request.headers },
        body: request.body instanceof JsonBody ? request.body.text : JSON.stringify(request.body),
      }, exchange);
      await exchange.headersArrived();
    } catch (error) {
      deadline.release();
      if (request.signal.aborted) throw abortReason(request.signal);
      const failure = deadline.expired ? deadline.error : mapTransportError(vendor, error);
      reportUpstreamCall(vendor, (performance.now() - started) / 1000, failure.code ?? 'upstream_error');
      throw failure;
    }
    reportUpstreamCall(vendor, (performance.now() - started) / 1000, statusText(exchange.status));
    if (exchange.status >= 200 && exchange.status < 300) return { status: exchange.status, headers: exchange.headers, body: exchange, deadline };
    const text = await readError(exchange, errorBodyLimit);
    deadline.release();
    if (request.signal.aborted) throw abortReason(request.signal);
    const extracted = safeExtract(this.options.extractError, text);
    throw this.failure(extracted.status ?? exchange.status, extracted.message, request.model, parseRetryAfter(exchange.headers) ?? extracted.retryAfterSeconds ?? null);
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
  async readText(response: UpstreamResponse, signal: AbortSignal): Promise<string> {
    const limit = this.options.transport.maxResponseBytes;
    const exchange = response.body;
    const parts: Buffer[] = [];
    try {
      for (;;) {
        await exchange.changed();
        if (exchange.received > limit) {
          const tooLarge = malformedUpstream(this.options.vendor, `an answer larger than ${limit} bytes`);
          exchange.abort(tooLarge);
          throw tooLarge;
        }
        for (const chunk of exchange.take()) parts.push(chunk);
        if (exchange.failure) throw exchange.failure;
        if (exchange.done) return parts.length === 1 ? parts[0].toString('utf8') : Buffer.concat(parts).toString('utf8');
      }
    } catch (error) {
      throw this.bodyFailure(response, signal, error);
    } finally {
      response.deadline?.release();
    }
  }

  /**
   * The body as chunks, mapping transport failures; stopping early destroys the socket. The
   * whole-answer deadline ends at the first chunk carrying an SSE `data:` field (comments do not count).
   */
  chunks(response: UpstreamResponse, signal: AbortSignal): AsyncIterableIterator<Buffer> {
    return new UpstreamBodyChunks(response, signal, this);
  }

  /** What a failure while reading a body becomes: the client's abort, the deadline's timeout, or a mapped transport error. */
  bodyFailure(response: UpstreamResponse, signal: AbortSignal, error: unknown): unknown {
    if (signal.aborted) return abortReason(signal);
    if (response.deadline?.expired) return response.deadline.error;
    if (error instanceof VendorError) return error;
    return mapTransportError(this.options.vendor, error);
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

/** Up to `limit` bytes of an error body; the rest is not read (the request is aborted). */
async function readError(exchange: UpstreamExchange, limit: number): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  while (size < limit) {
    await exchange.changed();
    for (const chunk of exchange.take()) {
      parts.push(chunk);
      size += chunk.length;
    }
    if (exchange.done) break;
  }
  exchange.abort(new Error('the gateway read enough of this error body'));
  return Buffer.concat(parts).toString('utf8').slice(0, limit);
}

const statusTexts = new Map<number, string>();
function statusText(status: number): string {
  let text = statusTexts.get(status);
  if (text === undefined) statusTexts.set(status, (text = String(status)));
  return text;
}

function safeExtract(extract: (text: string) => ExtractedError, text: string): ExtractedError {
  try {
    return extract(text);
  } catch {
    return { message: null };
  }
}
