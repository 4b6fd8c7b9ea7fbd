/**
 * The request path after auth: parse and validate, route (an alias's targets in order), admission,
 * then a `CompletionRun` that generates, shapes, meters and records. A request refused before it
 * becomes a run (bad input, unknown model, a limit) is recorded here, once, and its error thrown.
 */
import type { Caller } from '../auth/authenticate.js';
import type { Config } from '../config/config.js';
import type { Admission } from '../usage/admission.js';
import type { VendorRegistry } from '../vendors/registry.js';
import type { RequestLogIds } from '../observability/logger.js';
import { AdmissionAsk, fallbackPrices, prepareTarget } from './completion-target.js';
import { CompletionRun } from './completion-run.js';
import { parseCompletionRequest, type ParsedCompletionRequest } from './parse-completion-request.js';
import type { RunRecorder } from './run-recorder.js';
import { NOTHING_USED } from './usage-meter.js';

export interface PipelineDependencies {
  config: Config;
  registry: VendorRegistry;
  admission: Admission;
  recorder: RunRecorder;
}

/** Reads one API's request body (text or chat completions) into the request the pipeline runs. */
export type RequestParser = (body: unknown) => ParsedCompletionRequest;

export class CompletionPipeline {
  constructor(private readonly dependencies: PipelineDependencies) {}

  /** An admitted run, or the GatewayError (400/404/429/503) that refused the request, after recording it. */
  async start(ids: RequestLogIds, caller: Caller, body: unknown, parse: RequestParser = parseCompletionRequest): Promise<CompletionRun> {
    const startedAt = performance.now();
    const { registry, admission, config, recorder } = this.dependencies;
    let parsed: ParsedCompletionRequest | null = null;
    try {
      parsed = parse(body);
      const current = parsed;
      const [model, ...fallbackModels] = config.aliases[current.model] ?? [current.model];
      const target = prepareTarget(registry, config.prices, model, current);
      const ticket = await admission.admit(new AdmissionAsk(ids, caller, target, fallbackPrices(registry, config.prices, fallbackModels)));
      recorder.begin(current.stream);
      return new CompletionRun({
        ids,
        caller,
        parsed: current,
        target,
        prepareFallback: (fallback) => prepareTarget(registry, config.prices, fallback, current),
        fallbackModels,
        ticket,
        recorder,
        startedAt,
      });
    } catch (error) {
      await this.refuse(ids, caller, error, { model: parsed?.model ?? modelOf(body), stream: parsed?.stream ?? false, startedAt });
      throw error;
    }
  }

  /** Records a request refused before it became a run (an unreadable body, bad input, a limit). */
  async refuse(ids: RequestLogIds, caller: Caller, error: unknown, seen: { model?: string; stream?: boolean; startedAt?: number } = {}): Promise<void> {
    const { recorder } = this.dependencies;
    const stream = seen.stream ?? false;
    recorder.begin(stream);
    try {
      await recorder.record({
        ids,
        caller,
        model: seen.model ?? '',
        vendor: null,
        stream,
        usage: NOTHING_USED,
        end: { kind: 'failed', error },
        startedAt: seen.startedAt ?? performance.now(),
        firstTokenAt: null,
        generationStartedAt: null,
      });
    } catch {
      // The ledger logged its failure; the client gets the refusal either way.
    }
  }

  /** Resolves when every request begun has its ledger record, or after `timeoutMs`. */
  drain(timeoutMs: number): Promise<void> {
    return this.dependencies.recorder.drain(timeoutMs);
  }
}

/** The model a refused body named, when it named one as text (for the ledger and the metrics). */
function modelOf(body: unknown): string {
  const model = body !== null && typeof body === 'object' ? (body as { model?: unknown }).model : undefined;
  return typeof model === 'string' ? model : '';
}
