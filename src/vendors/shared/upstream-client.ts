/**
 * HTTP to one vendor through undici's `request` API. An Agent keeps one keep-alive pool per
 * upstream origin (at most `maxConnectionsPerOrigin` connections). `open` returns 2xx responses
 * only; anything else is already a VendorError. The caller's signal aborts the request, and so does
 * leaving a body unread: undici then destroys the socket rather than pooling it half-read.
 *
 * Time limits, each a 504:
 * - connecting: `connectTimeoutMs` (undici's connect timeout);
 * - silence: `idleTimeoutMs` without a body byte (undici's `bodyTimeout`, which does not count
 *   while the socket is paused because the gateway's own client reads slowly); a stream also waits
 *   at most that long for its headers (`headersTimeout`), while a non-stream answer's headers come
 *   only when the vendor is done, so for those only the whole-answer limit applies. undici checks
 *   both on a half-second tick: they hold to within about half a second;
 * - the whole answer: `responseTimeoutMs` (call-abort.ts).
 */
import { Agent, type Dispatcher } from 'undici';
import { reportUpstreamCall } from '../../observability/upstream-events.js';
import { VendorError } from '../../errors/vendor-error.js';
import { abortReason } from './abort.js';
import { CallAbort } from './call-abort.js';
import { malformedUpstream, mapTransportError, mapUpstreamStatus, parseRetryAfter } from './map-upstream-error.js';
import type { TransportOptions } from './transport-options.js';

/** One call to make. */
export interface UpstreamRequest {
  url: URL;
  /** Auth and tracing headers; content-type and accept are added. */
  headers: Record<string, string>;
  body: string;
  /** Streams wait at most the idle limit for their headers; non-stream calls up to the whole-answer limit. */
  streaming: boolean;
  /** The client's signal: aborting it ends the upstream request. */
  signal: AbortSignal;
  /** The model name, for 404 messages. */
  model: string;
}

/** A 2xx answer whose body is still to be read (`readText` or `chunks`). */
export interface UpstreamResponse {
  /** The body as undici delivers it: a readable stream of Buffers. */
  body: Dispatcher.ResponseData['body'];
  /** What ends the call early; released once the body is read (or left). */
  abort: CallAbort;
}

/** What a vendor's error body says, in that vendor's format. */
export interface ExtractedError {
  /** The vendor's own message, or null when its body had none. */
  message: string | null;
  /** Set when the vendor's body tells a truer status than its HTTP status (Gemini's invalid-key 400). */
  status?: number;
  /** A retry hint found in the body (Gemini's RetryInfo), when the headers had none. */
  retryAfterSeconds?: number | null;
  /** The body says the gateway's account is out of credit or past a spend limit, whatever the status (often 429). */
  quotaExhausted?: boolean;
}

/** What one vendor's client needs. */
export interface UpstreamClientOptions {
  vendor: string;
  transport: TransportOptions;
  /** The env variable holding the key (for credential error messages), or null for keyless vendors. */
  credentialVariable: string | null;
  /** Strings never repeated in an error message (the vendor key). */
  secrets: readonly string[];
  extractError(bodyText: string): ExtractedError;
}

const errorBodyLimit = 64 * 1024;

/** HTTP to one vendor: its connection pool, time limits and error mapping. */
export class UpstreamClient {
  private readonly agent: Agent;

  constructor(private readonly options: UpstreamClientOptions) {
    this.agent = new Agent({
      connect: { timeout: options.transport.connectTimeoutMs },
      connections: options.transport.maxConnectionsPerOrigin,
      keepAliveTimeout: 30_000,
    });
  }

  get vendor(): string {
    return this.options.vendor;
  }

  async open(request: UpstreamRequest): Promise<UpstreamResponse> {
    const { vendor, transport } = this.options;
    const started = performance.now();
    const abort = new CallAbort(vendor, transport.responseTimeoutMs, request.signal);
    let response: Dispatcher.ResponseData;
    try {
      response = await this.agent.request({
        origin: request.url.origin,
        path: `${request.url.pathname}${request.url.search}`,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: request.streaming ? 'text/event-stream' : 'application/json', ...request.headers },
        body: request.body,
        signal: abort.signal,
        // 0 turns undici's limit off: a non-stream answer's headers have the whole-answer limit.
        headersTimeout: request.streaming ? transport.idleTimeoutMs : 0,
        bodyTimeout: transport.idleTimeoutMs,
      });
    } catch (error) {
      abort.release();
      if (request.signal.aborted) throw abortReason(request.signal);
      const failure = abort.expired ?? mapTransportError(vendor, error);
      reportUpstreamCall(vendor, (performance.now() - started) / 1000, failure.code ?? 'upstream_error');
      throw failure;
    }
    const status = response.statusCode;
    reportUpstreamCall(vendor, (performance.now() - started) / 1000, String(status));
    if (status >= 200 && status < 300) return { body: response.body, abort };
    const text = await readError(response.body, errorBodyLimit);
    abort.release();
    if (request.signal.aborted) throw abortReason(request.signal);
    const extracted = safeExtract(this.options.extractError, text);
    const retryAfter = parseRetryAfter(response.headers) ?? extracted.retryAfterSeconds ?? null;
    throw this.failure(extracted.status ?? status, extracted.message, request.model, retryAfter, extracted.quotaExhausted ?? false);
  }

  /** The mapped error for an upstream status; also for errors a vendor reports inside a stream. */
  failure(status: number, message: string | null, model: string, retryAfterSeconds: number | null = null, quotaExhausted = false): VendorError {
    return mapUpstreamStatus({
      vendor: this.options.vendor,
      status,
      message,
      model,
      retryAfterSeconds,
      credentialVariable: this.options.credentialVariable,
      secrets: this.options.secrets,
      quotaExhausted,
    });
  }

  /** Reads a whole (non-stream) body as text, at most `maxResponseBytes`, mapping transport failures. */
  async readText(response: UpstreamResponse, signal: AbortSignal): Promise<string> {
    const limit = this.options.transport.maxResponseBytes;
    const parts: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of bufferChunks(response.body)) {
        size += chunk.length;
        // Leaving the loop destroys the body: the rest is never read.
        if (size > limit) throw malformedUpstream(this.options.vendor, `an answer larger than ${limit} bytes`);
        parts.push(chunk);
      }
      return Buffer.concat(parts).toString('utf8');
    } catch (error) {
      throw this.bodyFailure(response, signal, error);
    } finally {
      response.abort.release();
    }
  }

  /**
   * The body's chunks as they arrive, mapping transport failures; stopping early ends the request.
   * The whole-answer limit ends at the first chunk carrying an SSE `data:` field: comments
   * (keep-alives) are not an answer.
   */
  async *chunks(response: UpstreamResponse, signal: AbortSignal): AsyncGenerator<Buffer> {
    let answered = false;
    try {
      for await (const chunk of bufferChunks(response.body)) {
        if (!answered && chunk.includes('data:')) {
          answered = true;
          response.abort.answered();
        }
        yield chunk;
      }
    } catch (error) {
      throw this.bodyFailure(response, signal, error);
    } finally {
      response.abort.release();
    }
  }

  /** What a failure while reading a body becomes: the client's abort, the whole-answer timeout, or a mapped transport error. */
  private bodyFailure(response: UpstreamResponse, signal: AbortSignal, error: unknown): unknown {
    if (signal.aborted) return abortReason(signal);
    if (response.abort.expired) return response.abort.expired;
    if (error instanceof VendorError) return error;
    return mapTransportError(this.options.vendor, error);
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => this.agent.destroy());
  }
}

/** undici's body yields Buffers; its stream type says `any`. */
function bufferChunks(body: Dispatcher.ResponseData['body']): AsyncIterable<Buffer> {
  return body;
}

/** Up to `limit` bytes of an error body; the rest is not read (leaving the loop ends the request). */
async function readError(body: Dispatcher.ResponseData['body'], limit: number): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of bufferChunks(body)) {
      parts.push(chunk);
      size += chunk.length;
      if (size >= limit) break;
    }
  } catch {
    // A connection that fails mid error body: what arrived is still the vendor's word.
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
