/** POST /v5/completions: renders a CompletionRun as one JSON object or as server-sent events. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config/config.js';
import { ChoiceAccumulator } from '../completions/choice-accumulator.js';
import { ChunkBuilder } from '../completions/chunk-builder.js';
import { completionId, GATEWAY_FINGERPRINT } from '../completions/completion-id.js';
import { toWireUsage, type Completion } from '../completions/completion-objects.js';
import { outcomeOf, type CompletionPipeline, type CompletionRun } from '../completions/completion-pipeline.js';
import type { RequestObserver } from '../observability/request-observer.js';
import { toErrorResponse } from './error-mapper.js';
import { GatewayError } from './gateway-error.js';
import { ClientCancel } from './client-cancel.js';
import { SseWriter } from './sse-writer.js';
import './fastify-types.js';

export interface CompletionsRouteOptions {
  pipeline: CompletionPipeline;
  config: Config;
  observer: RequestObserver;
}

const ledgerUnavailable = (cause: unknown) =>
  new GatewayError('The usage ledger is unavailable, so the gateway cannot report this completion as metered. Retry later.', {
    status: 503, type: 'service_unavailable', code: 'ledger_unavailable', cause, headers: { 'retry-after': '1' },
  });

export function registerCompletionsRoute(app: FastifyInstance, options: CompletionsRouteOptions): void {
  const { pipeline, config, observer } = options;

  app.post('/v5/completions', async (request, reply) => {
    const run = pipeline.begin(completionId(), request.caller!);
    request.completionRun = run;
    await run.prepare(request.body);
    const abort = new ClientCancel();
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) abort.abort();
    });
    const headers: Record<string, string> = { ...run.ticket!.headers };
    if (run.target!.plan.emulated.length > 0) headers['x-tollgate-emulated'] = run.target!.plan.emulated.join(',');
    observer.started(run);
    if (run.parsed!.stream) return streamCompletion(request, reply, run, abort, headers);
    return jsonCompletion(reply, run, abort, headers);
  });

  async function jsonCompletion(reply: FastifyReply, run: CompletionRun, abort: ClientCancel, headers: Record<string, string>) {
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
      if (!abort.signal.aborted) throw error; // the error handler records it
    }
    if (abort.signal.aborted) {
      await finishQuietly(run, 'cancelled', 499, 'client_cancelled');
      return reply;
    }
    let usage;
    try {
      usage = await run.finish('success', 200);
    } catch (error) {
      throw ledgerUnavailable(error);
    }
    const completion: Completion = {
      id: run.requestId,
      object: 'text_completion',
      created: Math.floor(Date.now() / 1000),
      model: run.parsed!.model,
      system_fingerprint: fingerprint ?? GATEWAY_FINGERPRINT,
      choices: accumulator.toChoices(),
      usage: toWireUsage(usage),
    };
    observer.finished(run, 200);
    return reply.headers(headers).send(completion);
  }

  async function streamCompletion(request: FastifyRequest, reply: FastifyReply, run: CompletionRun, abort: ClientCancel, headers: Record<string, string>) {
    reply.hijack();
    const baseHeaders = { ...(reply.getHeaders() as Record<string, string>), ...headers };
    const sse = new SseWriter(reply.raw, baseHeaders, config.keepAliveIntervalMs);
    const accumulator = new ChoiceAccumulator(run.choiceCount, run.target!.request.logprobs !== null);
    const chunks = new ChunkBuilder(run.requestId, Math.floor(Date.now() / 1000), run.parsed!.model, run.parsed!.includeUsage);
    chunks.setFingerprint(GATEWAY_FINGERPRINT);
    try {
      for await (const batch of run.generate(abort.signal)) {
        for (const part of batch) {
          if (part.type === 'text-delta') {
            const logprobs = accumulator.addText(part);
            sse.send(chunks.choice(part.choice, part.text, logprobs, null));
          } else if (part.type === 'finish') {
            accumulator.finish(part.choice, part.finishReason);
            sse.send(chunks.choice(part.choice, '', null, part.finishReason));
          } else if (part.type === 'metadata') {
            chunks.setFingerprint(part.systemFingerprint);
          }
        }
        await sse.drained();
      }
    } catch (error) {
      const { outcome, status, code } = outcomeOf(error, abort.signal.aborted);
      await finishQuietly(run, outcome, status, code);
      observer.finished(run, status);
      if (abort.signal.aborted) return sse.end();
      if (!sse.headersSent) return sendRawError(reply, baseHeaders, error);
      request.log.debug({ requestId: run.requestId }, 'stream failed after output');
      return sse.error(error);
    }
    if (abort.signal.aborted) {
      await finishQuietly(run, 'cancelled', 499, 'client_cancelled');
      observer.finished(run, 499);
      return sse.end();
    }
    for (let index = 0; index < accumulator.count; index++) {
      if (!accumulator.isFinished(index)) await sse.data(chunks.choice(index, '', null, 'stop'));
    }
    let usage;
    try {
      usage = await run.finish('success', 200);
    } catch (error) {
      observer.finished(run, 503);
      if (!sse.headersSent) return sendRawError(reply, baseHeaders, ledgerUnavailable(error));
      return sse.error(ledgerUnavailable(error));
    }
    if (run.parsed!.includeUsage) await sse.data(chunks.usage(toWireUsage(usage)));
    observer.finished(run, 200);
    await sse.done();
  }
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

function sendRawError(reply: FastifyReply, headers: Record<string, string>, error: unknown): void {
  const { status, body, headers: errorHeaders } = toErrorResponse(error);
  const raw = reply.raw;
  if (raw.headersSent || raw.destroyed) return;
  raw.writeHead(status, { ...headers, ...errorHeaders, 'content-type': 'application/json; charset=utf-8' });
  raw.end(JSON.stringify(body));
}
