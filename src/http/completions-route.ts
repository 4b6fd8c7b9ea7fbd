/**
 * POST /v5/completions and POST /v5/chat/completions (one `InferenceApi` each): starts a run through
 * the pipeline and renders it as the API writes it, as one JSON answer or as server-sent events. The
 * middleware has set the request id, CORS headers and caller, and read the body. Errors before
 * output are HTTP errors; after output, an error event ends the stream.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { completionId } from '../completions/completion-id.js';
import type { CompletionPipeline } from '../completions/completion-pipeline.js';
import type { CompletionRun } from '../completions/completion-run.js';
import type { InferenceApi } from '../completions/inference-apis.js';
import { toErrorResponse } from '../errors/error-mapper.js';
import type { Logger } from '../observability/logger.js';
import type { IdempotencyClaim, Replay } from '../usage/idempotency-keys.js';
import { callerOf } from './api-key-auth.js';
import { sendError } from './error-reply.js';
import type { InFlightCompletions } from './in-flight-completions.js';
import { replayedHeaders, type IdempotentReplies } from './idempotent-replies.js';
import { SSE_DONE, SseWriter } from './sse-writer.js';
import './fastify-types.js';

export interface CompletionsRouteOptions {
  pipeline: CompletionPipeline;
  /** Interval of `: ping` comments on a silent stream. */
  keepAliveIntervalMs: number;
  logger: Logger;
  /** The requests in flight, which shutdown ends with an answer once its grace period passes. */
  inFlight: InFlightCompletions;
  /** `Idempotency-Key`: claims, replays and stored answers. */
  idempotency: IdempotentReplies;
}

export function registerCompletionsRoute(app: FastifyInstance, options: CompletionsRouteOptions, api: InferenceApi): void {
  const { pipeline } = options;
  const route = api.path;
  app.post(
    route,
    {
      // An authenticated request refused before the handler (a body that cannot be read) still gets its one ledger record.
      errorHandler: async (error, request, reply) => {
        if (request.caller !== null) await pipeline.refuse({ completionId: completionId(api.idPrefix), requestId: request.id }, request.caller, error);
        return sendError(error, request, reply);
      },
    },
    async (request, reply) => {
      const ids = { completionId: completionId(api.idPrefix), requestId: request.id };
      // Followed from the start: a client that leaves while its key is claimed or admission runs must not leave a run behind it.
      const cancel = new AbortController();
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) cancel.abort();
      });
      // Followed by shutdown from the start too: past the grace period a request still waiting on a slow
      // claim is answered then, not when the database returns (by which time its connection may be cut).
      options.inFlight.add(ids.completionId, cancel);
      let begun: IdempotencyClaim | Replay | null;
      try {
        begun = await options.idempotency.begin(request, route, cancel.signal);
      } catch (error) {
        options.inFlight.delete(ids.completionId);
        await pipeline.refuse(ids, callerOf(request), error);
        return sendError(error, request, reply);
      }
      if (begun?.kind === 'replay') {
        options.inFlight.delete(ids.completionId);
        return options.idempotency.replay(request, reply, begun);
      }
      const claim = begun;
      try {
        let run: CompletionRun;
        try {
          run = await pipeline.start(ids, callerOf(request), request.body, api.parse);
        } catch (error) {
          return sendError(error, request, reply);
        }
        reply.headers(run.headers);
        if (run.parsed.stream) return await streamRun(run, reply, cancel.signal, claim, options, api);
        try {
          const completion = api.whole(await run.complete(cancel.signal), run.parsed);
          if (claim === null) return reply.send(completion);
          // Serialised here, so the replay is these very bytes.
          const text = JSON.stringify(completion);
          reply.type('application/json; charset=utf-8');
          await claim.complete(run.ids.completionId, { status: 200, headers: replayedHeaders(reply.getHeaders()), body: Buffer.from(text) });
          return reply.send(text);
        } catch (error) {
          if (reply.raw.destroyed) return reply;
          // Aborted with the client still there: the gateway gave up (shutdown), and says why.
          return sendError(cancel.signal.aborted ? cancel.signal.reason : error, request, reply);
        }
      } finally {
        // A no-op once the answer is stored: any other ending frees the key for a retry.
        await claim?.release();
        options.inFlight.delete(ids.completionId);
      }
    },
  );
}

async function streamRun(
  run: CompletionRun,
  reply: FastifyReply,
  signal: AbortSignal,
  claim: IdempotencyClaim | null,
  options: CompletionsRouteOptions,
  api: InferenceApi,
): Promise<FastifyReply> {
  reply.hijack();
  const write = api.chunkWriter(run.parsed);
  const headers = headersOf(reply);
  const transcript: string[] | null = claim ? [] : null;
  const sse = new SseWriter(reply.raw, headers, options.keepAliveIntervalMs, transcript);
  try {
    for await (const chunks of run.chunks(signal)) {
      await sse.send(chunks.map((chunk) => `data: ${JSON.stringify(write(chunk))}\n\n`).join(''));
    }
    if (!signal.aborted && claim && transcript) {
      // Stored before the last byte, so a retry that follows the answer finds it.
      sse.start();
      const body = Buffer.from(transcript.join('') + SSE_DONE);
      await claim.complete(run.ids.completionId, { status: 200, headers: replayedHeaders(headers), body });
    }
    if (!signal.aborted) sse.done();
    else if (reply.raw.destroyed) sse.end();
    // Aborted with the client still there: the gateway gave up (shutdown), and says why.
    else endWithError(run, sse, headers, signal.reason, options);
  } catch (error) {
    endWithError(run, sse, headers, error, options);
  }
  return reply;
}

/** A stream's failure: an error event once it has begun, else an HTTP error. */
function endWithError(run: CompletionRun, sse: SseWriter, headers: Record<string, string>, error: unknown, options: CompletionsRouteOptions): void {
  const ids = { requestId: run.ids.requestId, completionId: run.ids.completionId };
  if (sse.started) {
    options.logger.debug(ids, 'stream failed after output');
    sse.error(error);
    return;
  }
  if (toErrorResponse(error).status >= 500) options.logger.warn({ ...ids, err: error }, 'stream failed before output');
  sse.stop();
  writeError(sse.response, headers, error);
}

/** The headers the middleware and the run set on a reply (request id, CORS, rate limits), as our own object. */
function headersOf(reply: FastifyReply): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = String(value);
  return headers;
}

/** An early error on a hijacked stream: the error shape with the request's headers. */
function writeError(response: ServerResponse, headers: Record<string, string>, error: unknown): void {
  if (response.headersSent || response.destroyed) return;
  const mapped = toErrorResponse(error);
  const text = JSON.stringify(mapped.body);
  response.writeHead(mapped.status, {
    ...headers,
    ...mapped.headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
  });
  response.end(text);
}
