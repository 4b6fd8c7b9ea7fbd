/**
 * HTTP to one vendor: an undici Agent keeps one keep-alive Pool per upstream origin, reused across
 * requests, with connect and idle timeouts. `open` returns 2xx responses only; anything else is
 * already a VendorError. The caller's signal aborts the request (the socket is destroyed, never
 * returned half-read to the pool).
 */
import { Agent, type Dispatcher } from 'undici';
import { reportUpstreamCall } from '../../observability/upstream-events.js';
import { VendorError } from '../vendor-error.js';
import { abortReason } from './abort.js';
import { mapTransportError, mapUpstreamStatus, parseRetryAfter } from './map-upstream-error.js';
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
    let response: Dispatcher.ResponseData;
    const started = performance.now();
    try {
      response = await this.agent.request({
        origin: request.url.origin,
        path: `${request.url.pathname}${request.url.search}`,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: request.streaming ? 'text/event-stream' : 'application/json', ...request.headers },
        body: JSON.stringify(request.body),
        signal: request.signal,
        headersTimeout: request.streaming ? transport.idleTimeoutMs : transport.responseTimeoutMs,
        bodyTimeout: transport.idleTimeoutMs,
      });
    } catch (error) {
      if (request.signal.aborted) throw abortReason(request.signal);
      const mapped = mapTransportError(vendor, error);
      reportUpstreamCall(vendor, (performance.now() - started) / 1000, mapped.code ?? 'transport_error');
      throw mapped;
    }
    reportUpstreamCall(vendor, (performance.now() - started) / 1000, String(response.statusCode));
    if (response.statusCode >= 200 && response.statusCode < 300) return { status: response.statusCode, headers: response.headers, body: response.body };
    const text = await readLimited(response.body, errorBodyLimit).catch(() => '');
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

  /** Reads a whole (non-stream) body as text, mapping transport failures. */
  async readText(response: UpstreamResponse, signal: AbortSignal): Promise<string> {
    try {
      return await response.body.text();
    } catch (error) {
      if (signal.aborted) throw abortReason(signal);
      throw mapTransportError(this.options.vendor, error);
    }
  }

  /** The body as chunks, mapping transport failures; stopping early destroys the socket. */
  async *chunks(response: UpstreamResponse, signal: AbortSignal): AsyncGenerator<Buffer> {
    try {
      for await (const chunk of response.body) yield chunk as Buffer;
    } catch (error) {
      if (signal.aborted) throw abortReason(signal);
      if (error instanceof VendorError) throw error;
      throw mapTransportError(this.options.vendor, error);
    } finally {
      if (!response.body.destroyed) response.body.destroy();
    }
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => this.agent.destroy());
  }
}

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
