/**
 * One admitted request, from its first upstream call to its one ledger record. It yields what the
 * route renders: the whole `Completion` (`complete`) or its stream chunks (`chunks`), and records
 * the request once, however it ends: success, a vendor error before or after output, a client
 * cancel. A failure before admission never becomes a run (see CompletionPipeline.start).
 */
import type { Caller } from '../auth/authenticate.js';
import { GatewayError } from '../errors/gateway-error.js';
import { VendorError } from '../errors/vendor-error.js';
import type { AdmissionTicket } from '../usage/admission.js';
import type { StreamPart } from '../vendors/types.js';
import type { RequestLogIds } from '../observability/logger.js';
import { ChoiceAccumulator } from './choice-accumulator.js';
import { toWireUsage, type ChoiceLogprobs, type Completion } from './completion-objects.js';
import type { CompletionTarget } from './completion-target.js';
import type { ParsedCompletionRequest } from './parse-completion-request.js';
import type { RunEnd, RunRecorder } from './run-recorder.js';
import { UsageMeter, type MeteredUsage } from './usage-meter.js';

/** Identifies the gateway build in `system_fingerprint` when the vendor gives none. */
const GATEWAY_FINGERPRINT = 'fp_tollgate_0_1';

/** What a run needs from the pipeline that started it. */
export interface RunSetup {
  ids: RequestLogIds;
  caller: Caller;
  parsed: ParsedCompletionRequest;
  target: CompletionTarget;
  /** Prepares a fallback target; throws when that model cannot honour the request. */
  prepareFallback: (model: string) => CompletionTarget;
  /** The alias's other models, in order. */
  fallbackModels: string[];
  ticket: AdmissionTicket;
  recorder: RunRecorder;
  startedAt: number;
}

export class CompletionRun {
  readonly ids: RequestLogIds;
  readonly parsed: ParsedCompletionRequest;
  /** Headers the answer carries: the rate-limit state and what the gateway emulated. */
  readonly headers: Record<string, string>;
  private target: CompletionTarget;
  private readonly setup: RunSetup;
  private readonly meter: UsageMeter;
  private generationStartedAt: number | null = null;
  private recorded = false;

  constructor(setup: RunSetup) {
    this.setup = setup;
    this.ids = setup.ids;
    this.parsed = setup.parsed;
    this.target = setup.target;
    this.meter = new UsageMeter(setup.startedAt);
    this.headers = { ...setup.ticket.headers };
    if (this.target.plan.emulated.length > 0) this.headers['x-tollgate-emulated'] = this.target.plan.emulated.join(',');
  }

  /** The whole answer, once the ledger recorded it. Throws (after recording) when the request fails or is cancelled. */
  async complete(signal: AbortSignal): Promise<Completion> {
    const accumulator = new ChoiceAccumulator(this.target.request);
    let fingerprint: string | null = null;
    try {
      for await (const batch of this.generate(signal)) {
        for (const part of batch) {
          if (part.type === 'text-delta') accumulator.addText(part);
          else if (part.type === 'finish') accumulator.finish(part.choice, part.finishReason);
          else if (part.systemFingerprint) fingerprint = part.systemFingerprint;
        }
      }
      if (signal.aborted) throw signal.reason;
    } catch (error) {
      await this.recordFailure(endOf(error, signal));
      throw error;
    }
    const usage = await this.record({ kind: 'success' });
    return {
      id: this.ids.completionId,
      object: 'text_completion',
      created: this.created,
      model: this.parsed.model,
      system_fingerprint: fingerprint ?? GATEWAY_FINGERPRINT,
      choices: accumulator.toChoices(),
      usage: toWireUsage(usage),
    };
  }

  /** When the request came, in Unix seconds: the answer's `created`, streamed or not, as the ledger's `createdAt`. */
  private get created(): number {
    return Math.floor((performance.timeOrigin + this.setup.startedAt) / 1000);
  }

  /**
   * The stream's chunks, a batch per read of the model's output. The last batch (choices the vendor
   * left unfinished, and the usage chunk when asked for) comes once the ledger recorded the request.
   * Throws (after recording) when the request fails; a cancel ends it quietly.
   */
  async *chunks(signal: AbortSignal): AsyncGenerator<Completion[]> {
    const accumulator = new ChoiceAccumulator(this.target.request, false);
    const created = this.created;
    let fingerprint = GATEWAY_FINGERPRINT;
    const includeUsage = this.parsed.includeUsage;
    const chunk = (index: number, text: string, logprobs: ChoiceLogprobs | null, finishReason: Completion['choices'][number]['finish_reason']): Completion => {
      const choices = [{ text, index, logprobs, finish_reason: finishReason }];
      const { completionId: id } = this.ids;
      const model = this.parsed.model;
      // OpenAI sends `usage: null` on every chunk of a stream that asked for usage, and no field otherwise.
      return includeUsage
        ? { id, object: 'text_completion', created, choices, model, system_fingerprint: fingerprint, usage: null }
        : { id, object: 'text_completion', created, choices, model, system_fingerprint: fingerprint };
    };
    let readToEnd = false;
    try {
      for await (const batch of this.generate(signal)) {
        const out: Completion[] = [];
        for (const part of batch) {
          if (part.type === 'text-delta') out.push(chunk(part.choice, part.text, accumulator.addText(part), null));
          else if (part.type === 'finish') {
            accumulator.finish(part.choice, part.finishReason);
            out.push(chunk(part.choice, '', null, part.finishReason));
          } else if (part.systemFingerprint) fingerprint = part.systemFingerprint;
        }
        if (out.length > 0) yield out;
      }
      if (signal.aborted) throw signal.reason;
      readToEnd = true;
    } catch (error) {
      await this.recordFailure(endOf(error, signal));
      if (signal.aborted) return;
      throw error;
    } finally {
      // The consumer stopped reading early (its client went away): the request ends as cancelled.
      if (!readToEnd) await this.recordFailure({ kind: 'cancelled' });
    }
    const closing: Completion[] = [];
    for (let index = 0; index < accumulator.count; index++) {
      if (!accumulator.isFinished(index)) closing.push(chunk(index, '', null, 'stop'));
    }
    const usage = await this.record({ kind: 'success' });
    if (this.parsed.includeUsage) closing.push({ ...chunk(0, '', null, null), choices: [], usage: toWireUsage(usage) });
    yield closing;
  }

  /**
   * The current target's parts, moving on to the alias's next target while a failure another
   * target may not share (VendorError.fallback) comes before the first output, and every batch
   * metered before it is handed out. Leaving early closes the adapter's stream, so its upstream
   * request ends with it.
   */
  private async *generate(signal: AbortSignal): AsyncGenerator<StreamPart[]> {
    this.generationStartedAt = performance.now();
    let iterator: AsyncIterator<StreamPart[]>;
    let result: IteratorResult<StreamPart[]>;
    for (;;) {
      const { resolved, request, plan } = this.target;
      const options = { signal, requestId: this.ids.completionId, plan, reportUsage: this.meter.reporter(this.target.price) };
      iterator = resolved.adapter.stream(request, resolved.model, options)[Symbol.asyncIterator]();
      try {
        result = await iterator.next();
        break;
      } catch (error) {
        const fallback = !signal.aborted && error instanceof VendorError && error.fallback;
        if (!fallback || !this.nextFallback()) throw error;
      }
    }
    try {
      while (!result.done) {
        for (const part of result.value) this.meter.observe(part);
        yield result.value;
        result = await iterator.next();
      }
    } finally {
      await iterator.return?.();
    }
  }

  private nextFallback(): boolean {
    const models = this.setup.fallbackModels;
    for (let model = models.shift(); model !== undefined; model = models.shift()) {
      try {
        this.target = this.setup.prepareFallback(model);
        return true;
      } catch {
        // A fallback that cannot honour this request is skipped, never used half-way.
      }
    }
    return false;
  }

  private async recordFailure(end: RunEnd): Promise<void> {
    if (this.recorded) return;
    try {
      await this.record(end);
    } catch {
      // The ledger already logged its failure; the client gets the original error (or is gone).
    }
  }

  /** The one ledger record of this run, with the settled usage; throws a 503 when the ledger cannot record a success. */
  private async record(end: RunEnd): Promise<MeteredUsage> {
    if (this.recorded) throw new GatewayError('A completion run was recorded twice.', { status: 500, type: 'server_error', code: 'internal_error' });
    this.recorded = true;
    const usage = this.meter.settle();
    await this.setup.ticket.settle({ tokens: usage.promptTokens + usage.completionTokens, costNanoUsd: usage.costNanoUsd });
    await this.setup.recorder.record({
      ids: this.ids,
      caller: this.setup.caller,
      model: this.parsed.model,
      vendor: this.target.resolved.adapter.name,
      stream: this.parsed.stream,
      usage,
      end,
      startedAt: this.setup.startedAt,
      firstTokenAt: this.meter.firstTokenAt,
      generationStartedAt: this.generationStartedAt,
    });
    return usage;
  }
}

/**
 * How a run that threw ended: cancelled when its client left; when the gateway itself ended it (its
 * signal aborted with a GatewayError, as at the shutdown deadline), that error, which the client is
 * answered with; otherwise the error thrown.
 */
function endOf(error: unknown, signal: AbortSignal): RunEnd {
  if (!signal.aborted) return { kind: 'failed', error };
  return signal.reason instanceof GatewayError ? { kind: 'failed', error: signal.reason } : { kind: 'cancelled' };
}
