/**
 * The request path after auth: parse + validate, route, admission, generate (with fallback before
 * the first output), metering, and the one ledger record. The HTTP layer only renders.
 */
import type { Config } from '../config/config.js';
import { toErrorResponse } from '../errors/error-mapper.js';
import { invalidRequest } from '../errors/gateway-error.js';
import type { Caller } from '../auth/authenticate.js';
import type { Storage, UsageOutcome, UsageRecord } from '../storage/types.js';
import type { Admission, AdmissionRequest, AdmissionTicket } from '../usage/admission.js';
import type { Ledger } from '../usage/ledger.js';
import type { ResolvedModel, VendorRegistry } from '../vendors/registry.js';
import type { GenerationPlan, GenerationRequest, StreamPart } from '../vendors/types.js';
import { VendorError } from '../errors/vendor-error.js';
import { checkContextWindow, type ContextCheck } from './check-context-window.js';
import { parseCompletionRequest, type ParsedCompletionRequest } from './parse-completion-request.js';
import { UsageMeter, type MeteredUsage } from './usage-meter.js';

export interface PipelineDependencies {
  config: Config;
  registry: VendorRegistry;
  admission: Admission;
  ledger: Ledger;
  storage: Storage;
}

interface Target {
  resolved: ResolvedModel;
  request: GenerationRequest;
  plan: GenerationPlan;
  context: ContextCheck;
}

/**
 * What admission reads. The token counts are getters over the context check, so the prompt is
 * tokenized only if admission reads them (a budget or token limit applies). A class rather than a
 * literal with getters: see CountedContext in check-context-window.ts.
 */
class AdmissionAsk implements AdmissionRequest {
  readonly requestId: string;
  readonly completionId: string;
  readonly accountId: string;
  readonly keyId: string | null;
  private readonly context: ContextCheck;

  constructor(run: CompletionRun, context: ContextCheck) {
    this.requestId = run.requestId;
    this.completionId = run.completionId;
    const caller = run.caller;
    this.accountId = caller.account.id;
    this.keyId = caller.keyId;
    this.context = context;
  }

  get maxTokens(): number {
    return this.context.maxTotal;
  }

  get promptTokens(): number {
    return this.context.promptTokens;
  }
}

/** One request in flight. Created by `CompletionPipeline.begin`; finished exactly once by `finish`. */
export class CompletionRun {
  /** The completion's id (`cmpl-…`): the response's `id` and the ledger record's key. */
  readonly completionId: string;
  /** The `x-request-id` the client received with the response. */
  readonly requestId: string;
  readonly caller: Caller;
  readonly startedAt: number;
  readonly createdAtIso: string;
  readonly meter: UsageMeter;
  parsed: ParsedCompletionRequest | null = null;
  target: Target | null = null;
  private fallbacks: string[] = [];
  ticket: AdmissionTicket | null = null;
  private finished = false;
  /** performance.now() when the vendor call began; the gateway's own overhead is the time before it. */
  generationStartedAt: number | null = null;
  /** The usage the ledger recorded, once finished. */
  settledUsage: MeteredUsage | null = null;
  /** Counted in the open-streams gauge (set and cleared by the request observer). */
  countedAsStream = false;
  private readonly pipeline: CompletionPipeline;

  constructor(pipeline: CompletionPipeline, completionId: string, requestId: string, caller: Caller) {
    this.pipeline = pipeline;
    this.completionId = completionId;
    this.requestId = requestId;
    this.caller = caller;
    this.startedAt = performance.now();
    this.createdAtIso = new Date().toISOString();
    this.meter = new UsageMeter(this.startedAt);
  }

  /** Validates and routes; throws 400/404/429 GatewayErrors before any upstream call. */
  async prepare(body: unknown): Promise<void> {
    const parsed = parseCompletionRequest(body);
    this.parsed = parsed;
    const targets = this.pipeline.targetsFor(parsed.model);
    this.target = this.pipeline.prepareTarget(targets[0], parsed);
    this.fallbacks = targets.slice(1);
    this.ticket = await this.pipeline.dependencies.admission.admit(new AdmissionAsk(this, this.target.context));
  }

  get choiceCount(): number {
    const request = this.target!.request;
    return request.prompts.length * request.n;
  }

  /**
   * Generates batches of parts. A retryable failure before the first batch moves on to the next
   * fallback target; after the first batch, errors propagate (they become stream error events).
   * Every batch is metered before it is handed out.
   */
  generate(signal: AbortSignal): AsyncIterableIterator<StreamPart[]> {
    return new Generation(this, signal);
  }

  /** Called once, at the first step of generation: from here the request may use tokens. */
  startGeneration(): void {
    this.generationStartedAt = performance.now();
  }

  /** The current target's adapter stream. */
  openTarget(signal: AbortSignal): AsyncIterator<StreamPart[]> {
    const target = this.target!;
    return target.resolved.adapter.stream(target.request, target.resolved.model, { signal, requestId: this.completionId, plan: target.plan, reportUsage: this.meter.report })[Symbol.asyncIterator]();
  }

  /** After a failure before the first batch: moves to the next fallback target when the failure allows one; false when not. */
  fallBack(error: unknown, signal: AbortSignal): boolean {
    const next = !signal.aborted && error instanceof VendorError && error.retryable ? this.nextFallback(this.parsed!) : null;
    if (!next) return false;
    this.target = next;
    return true;
  }

  private nextFallback(parsed: ParsedCompletionRequest): Target | null {
    while (this.fallbacks.length > 0) {
      const model = this.fallbacks.shift()!;
      try {
        return this.pipeline.prepareTarget(model, parsed);
      } catch {
        // A fallback that cannot honour this request is skipped, never used half-way.
      }
    }
    return null;
  }

  /** Settles usage, the budget reservation and the ledger record. Throws when the ledger write fails. */
  async finish(outcome: UsageOutcome, status: number, errorCode: string | null = null): Promise<MeteredUsage> {
    if (this.finished) throw new Error('CompletionRun.finish called twice');
    this.finished = true;
    const request = this.target?.request;
    const usage = this.meter.settle(this.target?.resolved.model ?? null, request?.prompts ?? [], request?.echo ?? false, request?.n ?? 1);
    const total = usage.promptTokens + usage.completionTokens;
    await this.ticket?.settle(total);
    const record: UsageRecord = {
      requestId: this.completionId,
      accountId: this.caller.account.id,
      keyId: this.caller.keyId,
      model: truncate(this.parsed?.model ?? '', 200),
      vendor: this.target?.resolved.adapter.name ?? null,
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      totalTokens: total,
      cachedTokens: usage.cachedTokens ?? null,
      reasoningTokens: usage.reasoningTokens ?? null,
      estimated: usage.estimated,
      stream: this.parsed?.stream ?? false,
      outcome,
      status,
      errorCode,
      latencyMs: round(performance.now() - this.startedAt),
      ttftMs: this.meter.firstTokenAt === null ? null : round(this.meter.firstTokenAt),
      createdAt: this.createdAtIso,
    };
    this.settledUsage = usage;
    try {
      await this.pipeline.dependencies.ledger.record(record, this);
    } finally {
      this.pipeline.settled();
    }
    return usage;
  }

  get isFinished(): boolean {
    return this.finished;
  }
}

const generationDone: IteratorResult<StreamPart[]> = Object.freeze({ value: undefined, done: true });

/**
 * A run's generation as an iterator written by hand rather than an async generator: a stream takes
 * one step through it per read of the model's output, and a generator's suspend-and-resume per
 * step cost more than the step's own work (see upstream-body-chunks.ts). Leaving early (`return`)
 * also closes the adapter's stream, so its upstream request ends with it.
 */
class Generation implements AsyncIterableIterator<StreamPart[]> {
  private readonly run: CompletionRun;
  private readonly signal: AbortSignal;
  private iterator: AsyncIterator<StreamPart[]> | null = null;
  private closed = false;

  constructor(run: CompletionRun, signal: AbortSignal) {
    this.run = run;
    this.signal = signal;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<StreamPart[]>> {
    if (this.closed) return generationDone;
    let result: IteratorResult<StreamPart[]>;
    try {
      result = this.iterator ? await this.iterator.next() : await this.first();
    } catch (error) {
      this.closed = true;
      throw error;
    }
    if (result.done) {
      this.closed = true;
      return generationDone;
    }
    const meter = this.run.meter;
    for (const part of result.value) meter.observe(part);
    return result;
  }

  async return(): Promise<IteratorResult<StreamPart[]>> {
    this.closed = true;
    const iterator = this.iterator;
    this.iterator = null;
    await iterator?.return?.();
    return generationDone;
  }

  /** The first batch, moving through the fallback targets while the failures allow it (runs once: afterwards there is an iterator, or the generation is closed). */
  private async first(): Promise<IteratorResult<StreamPart[]>> {
    this.run.startGeneration();
    for (;;) {
      try {
        const iterator = this.run.openTarget(this.signal);
        const first = await iterator.next();
        this.iterator = iterator;
        return first;
      } catch (error) {
        if (!this.run.fallBack(error, this.signal)) throw error;
      }
    }
  }
}

export class CompletionPipeline {
  readonly dependencies: PipelineDependencies;
  /**
   * Runs not yet finished; shutdown waits for their ledger records before closing storage. A count,
   * not a Set of runs: a long-lived Set that requests are added to and deleted from kept whole
   * requests alive through young-generation GCs once any full GC had promoted its table (README,
   * "Objects that outlive their request").
   */
  private inFlight = 0;
  private drained: (() => void) | null = null;

  constructor(dependencies: PipelineDependencies) {
    this.dependencies = dependencies;
  }

  begin(completionId: string, requestId: string, caller: Caller): CompletionRun {
    const run = new CompletionRun(this, completionId, requestId, caller);
    this.inFlight++;
    return run;
  }

  /** Called by a run, once, when its ledger write settled (written or failed). */
  settled(): void {
    this.inFlight--;
    if (this.inFlight === 0) this.drained?.();
  }

  /** Resolves when every run has settled its record, or after `timeoutMs`. */
  async drain(timeoutMs: number): Promise<void> {
    if (this.inFlight === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      timer.unref();
      this.drained = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** The alias's ordered targets, or the model itself. */
  targetsFor(model: string): string[] {
    const alias = this.dependencies.config.aliases[model];
    return alias ? [...alias] : [model];
  }

  prepareTarget(model: string, parsed: ParsedCompletionRequest): Target {
    const resolved = this.dependencies.registry.resolve(model);
    const request = generationRequest(resolved.model.name, parsed.generation);
    const context = checkContextWindow(request, resolved.model);
    const plan = resolved.adapter.prepare(request, resolved.model);
    return { resolved, request, plan, context };
  }
}

/**
 * The request for one target, field by field: one object of a fixed shape, where a spread of the
 * parsed fields copied them one at a time through the runtime (~4k instructions a request). The
 * type makes a new field of GenerationRequest a compile error here until it is copied.
 */
function generationRequest(model: string, g: ParsedCompletionRequest['generation']): GenerationRequest {
  return {
    model,
    prompts: g.prompts,
    n: g.n,
    bestOf: g.bestOf,
    maxTokens: g.maxTokens,
    temperature: g.temperature,
    topP: g.topP,
    seed: g.seed,
    stop: g.stop,
    presencePenalty: g.presencePenalty,
    frequencyPenalty: g.frequencyPenalty,
    logitBias: g.logitBias,
    logprobs: g.logprobs,
    echo: g.echo,
    suffix: g.suffix,
    user: g.user,
    stream: g.stream,
  };
}

/** Maps an error to the ledger outcome, with the status and code the client is answered with. */
export function outcomeOf(error: unknown, aborted: boolean): { outcome: UsageOutcome; status: number; code: string | null } {
  if (aborted) return { outcome: 'cancelled', status: 499, code: 'client_cancelled' };
  const { status, body } = toErrorResponse(error);
  const outcome: UsageOutcome = error instanceof VendorError ? 'vendor_error' : status === 429 ? 'rate_limited' : status < 500 ? 'invalid_request' : 'error';
  return { outcome, status, code: body.error.code };
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

function truncate(text: string, max: number): string {
  return text.length > max ? text.slice(0, max) : text;
}

export { invalidRequest };
