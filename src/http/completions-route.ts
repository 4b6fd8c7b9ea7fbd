/**
 * POST /v5/completions: renders a CompletionRun as one JSON object or as server-sent events, on
 * the raw Node response. completions-edge.ts feeds it every plain JSON request straight from the
 * HTTP server; fastify's route (registered here) feeds it the rest, so both answer the same way.
 * `serve` never throws: every failure becomes the response and, for an authenticated caller,
 * exactly one ledger record.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Caller } from '../auth/authenticate.js';
import type { Config } from '../config/config.js';
import { ChoiceAccumulator } from '../completions/choice-accumulator.js';
import { ChunkBuilder } from '../completions/chunk-builder.js';
import { completionId, GATEWAY_FINGERPRINT } from '../completions/completion-id.js';
import { completionJson, toWireUsage, type Completion } from '../completions/completion-objects.js';
import { outcomeOf, type CompletionPipeline, type CompletionRun } from '../completions/completion-pipeline.js';
import type { Logger } from '../observability/logger.js';
import type { RequestObserver } from '../observability/request-observer.js';
import { endInOneWrite } from './end-in-one-write.js';
import { toErrorResponse } from '../errors/error-mapper.js';
import { GatewayError } from '../errors/gateway-error.js';
import { ClientCancel } from './client-cancel.js';
import { SseWriter } from './sse-writer.js';
import './fastify-types.js';

export interface CompletionsHandlerOptions {
  pipeline: CompletionPipeline;
  config: Config;
  observer: RequestObserver;
  logger: Logger;
}

/** Who is asking and the headers every answer carries (x-request-id, CORS). */
export interface CompletionContext {
  requestId: string;
  caller: Caller;
  /** Owned by this request: the handler adds to it. */
  headers: Record<string, string>;
}

const ledgerUnavailable = (cause: unknown) =>
  new GatewayError('The usage ledger is unavailable, so the gateway cannot report this completion as metered. Retry later.', {
    status: 503, type: 'service_unavailable', code: 'ledger_unavailable', cause, headers: { 'retry-after': '1' },
  });

export class CompletionsHandler {
  private readonly pipeline: CompletionPipeline;
  private readonly observer: RequestObserver;
  private readonly logger: Logger;
  private readonly keepAliveIntervalMs: number;

  constructor(options: CompletionsHandlerOptions) {
    this.pipeline = options.pipeline;
    this.observer = options.observer;
    this.logger = options.logger;
    this.keepAliveIntervalMs = options.config.keepAliveIntervalMs;
  }

  /** Serves one parsed request body. */
  async serve(response: ServerResponse, context: CompletionContext, body: unknown): Promise<void> {
    const run = this.pipeline.begin(completionId(), context.requestId, context.caller);
    const headers = context.headers;
    try {
      await run.prepare(body);
      const abort = new ClientCancel();
      response.once('close', () => {
        if (!response.writableFinished) abort.abort();
      });
      Object.assign(headers, run.ticket!.headers);
      if (run.target!.plan.emulated.length > 0) headers['x-tollgate-emulated'] = run.target!.plan.emulated.join(',');
      this.observer.started(run);
      if (run.parsed!.stream) await this.streamCompletion(response, run, abort, headers);
      else await this.jsonCompletion(response, run, abort, headers);
    } catch (error) {
      await this.fail(response, headers, run, error);
    }
  }

  /** An authenticated request refused before it reached the pipeline (an unreadable body): its one ledger record and the error. */
  async refuse(response: ServerResponse, context: CompletionContext, error: unknown): Promise<void> {
    await this.fail(response, context.headers, this.pipeline.begin(completionId(), context.requestId, context.caller), error);
  }

  private async fail(response: ServerResponse, headers: Record<string, string>, run: CompletionRun, error: unknown): Promise<void> {
    if (!run.isFinished) {
      const { outcome, status, code } = outcomeOf(error, false);
      await finishQuietly(run, outcome, status, code);
      this.observer.finished(run, status);
    }
    if (!(error instanceof GatewayError) && toErrorResponse(error).status >= 500) this.logger.error({ err: error, requestId: run.requestId, completionId: run.completionId }, 'unhandled error');
    writeError(response, headers, error);
  }

  private async jsonCompletion(response: ServerResponse, run: CompletionRun, abort: ClientCancel, headers: Record<string, string>): Promise<void> {
    const accumulator = new ChoiceAccumulator(run.choiceCount, run.target!.request.logprobs !== null);
    let fingerprint: string | null = null;
    try {
      for await (const batch of run.generate(abort.signal)) {
        for (const part of batch) {
          if (part.type === 'text-delta') accumulator.addText(part);
          else if (part.type === 'finish') accumulator.finish(part.choice, part.finishReason);
          else if (part.type === 'metadata' && part.systemFingerprint) fingerprint = part.systemFingerprint;
        }
      }
    } catch (error) {
      if (!abort.signal.aborted) throw error; // `fail` records it
    }
    if (abort.signal.aborted) {
      await finishQuietly(run, 'cancelled', 499, 'client_cancelled');
      return;
    }
    let usage;
    try {
      usage = await run.finish('success', 200);
    } catch (error) {
      // The run is finished (its record failed), so `fail` will not observe it: count and log it here.
      this.observer.finished(run, 503);
      throw ledgerUnavailable(error);
    }
    const completion: Completion = {
      id: run.completionId,
      object: 'text_completion',
      created: Math.floor(Date.now() / 1000),
      model: run.parsed!.model,
      system_fingerprint: fingerprint ?? GATEWAY_FINGERPRINT,
      choices: accumulator.toChoices(),
      usage: toWireUsage(usage),
    };
    this.observer.finished(run, 200);
    const { text, ascii } = completionJson(completion);
    writeJsonText(response, 200, headers, text, ascii);
  }

  private async streamCompletion(response: ServerResponse, run: CompletionRun, abort: ClientCancel, headers: Record<string, string>): Promise<void> {
    const observer = this.observer;
    const sse = new SseWriter(response, headers, this.keepAliveIntervalMs);
    const accumulator = new ChoiceAccumulator(run.choiceCount, run.target!.request.logprobs !== null, false);
    const chunks = new ChunkBuilder(run.completionId, Math.floor(Date.now() / 1000), run.parsed!.model, run.parsed!.includeUsage, GATEWAY_FINGERPRINT);
    try {
      for await (const batch of run.generate(abort.signal)) {
        for (const part of batch) {
          if (part.type === 'text-delta') {
            const logprobs = accumulator.addText(part);
            sse.send(chunks.choice(part.choice, part.text, logprobs, null), chunks.ascii);
          } else if (part.type === 'finish') {
            accumulator.finish(part.choice, part.finishReason);
            sse.send(chunks.choice(part.choice, '', null, part.finishReason), chunks.ascii);
          } else if (part.type === 'metadata') {
            chunks.setFingerprint(part.systemFingerprint);
          }
        }
        // Awaited only when the socket is full: `await` on nothing would still cost a microtask turn per batch.
        const draining = sse.drained();
        if (draining) await draining;
      }
    } catch (error) {
      const { outcome, status, code } = outcomeOf(error, abort.signal.aborted);
      await finishQuietly(run, outcome, status, code);
      observer.finished(run, status);
      if (abort.signal.aborted) return sse.end();
      if (!sse.headersSent) return writeError(response, headers, error);
      this.logger.debug({ requestId: run.requestId, completionId: run.completionId }, 'stream failed after output');
      return sse.error(error);
    }
    if (abort.signal.aborted) {
      await finishQuietly(run, 'cancelled', 499, 'client_cancelled');
      observer.finished(run, 499);
      return sse.end();
    }
    for (let index = 0; index < accumulator.count; index++) {
      if (!accumulator.isFinished(index)) sse.send(chunks.choice(index, '', null, 'stop'), chunks.ascii);
    }
    sse.holdForEnd();
    let usage;
    try {
      usage = await run.finish('success', 200);
    } catch (error) {
      observer.finished(run, 503);
      if (!sse.headersSent) return writeError(response, headers, ledgerUnavailable(error));
      return sse.error(ledgerUnavailable(error));
    }
    if (run.parsed!.includeUsage) sse.send(chunks.usage(toWireUsage(usage)), chunks.ascii);
    observer.finished(run, 200);
    await sse.done();
  }
}

/** fastify's route, for what the edge leaves to fastify (other content types, no body). */
export function registerCompletionsRoute(app: FastifyInstance, handler: CompletionsHandler): void {
  app.post('/v5/completions', (request, reply) => {
    reply.hijack();
    return handler.serve(reply.raw, { requestId: request.id, caller: request.caller!, headers: headersOf(reply) }, request.body);
  });
}

/** The headers fastify's hooks set on a reply (request id, CORS, `connection: close` after a body error), as our own object. */
export function headersOf(reply: FastifyReply): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = String(value);
  return headers;
}

/** Settles a failed or cancelled run; a ledger failure here is logged by the ledger and not rethrown. */
export async function finishQuietly(run: CompletionRun, outcome: Parameters<CompletionRun['finish']>[0], status: number, code: string | null): Promise<void> {
  if (run.isFinished) return;
  try {
    await run.finish(outcome, status, code);
  } catch {
    // Nothing more can be done for the client; the ledger already logged the failure.
  }
}

/** One JSON answer; nothing is written once the response has begun or its socket is gone. */
export function writeJson(response: ServerResponse, status: number, headers: Record<string, string>, body: unknown): void {
  writeJsonText(response, status, headers, JSON.stringify(body), false);
}

/** A JSON body already written; `ascii` (known to hold no character above U+007F) sends it as latin1, the same bytes without measuring or encoding it. */
function writeJsonText(response: ServerResponse, status: number, headers: Record<string, string>, text: string, ascii: boolean): void {
  if (response.headersSent || response.destroyed) return;
  headers['content-type'] = 'application/json; charset=utf-8';
  headers['content-length'] = String(ascii ? text.length : Buffer.byteLength(text));
  response.writeHead(status, headers);
  endInOneWrite(response, text, ascii ? 'latin1' : 'utf8');
}

/** The error shape for anything thrown, with the request's own headers; nothing once the response has begun. */
export function writeError(response: ServerResponse, headers: Record<string, string>, error: unknown): void {
  const { status, body, headers: errorHeaders } = toErrorResponse(error);
  writeJson(response, status, Object.assign(headers, errorHeaders), body);
}
