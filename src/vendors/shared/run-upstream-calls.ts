/**
 * The one pipeline every remote adapter's `stream` ends in: each planned upstream call is retried
 * (before its first output), shaped (echo, stops, global indexes), metered (its usage reported
 * once, however it ended), and all calls are merged concurrently.
 */
import type { StreamPart, Usage } from '../types.js';
import { sleep } from './abort.js';
import type { CallPart } from './call-part.js';
import { CallUsage, type CallUsageShape } from './call-usage.js';
import { fanOut } from './fan-out.js';
import { retryAfterFailure, type RetryOptions } from './retry.js';
import { ChoiceShaper, type CallShape } from './shape-choices.js';

export interface PlannedCall extends CallShape, CallUsageShape {
  run(signal: AbortSignal): AsyncIterable<CallPart[]>;
}

export interface RunOptions {
  signal: AbortSignal;
  retry: RetryOptions;
  maxConcurrentCalls: number;
  /** Receives each call's usage once (GenerationOptions.reportUsage). */
  reportUsage: (usage: Usage) => void;
}

export function runUpstreamCalls(calls: readonly PlannedCall[], options: RunOptions): AsyncIterable<StreamPart[]> {
  const sources = calls.map((call) => (signal: AbortSignal) => new CallRun(call, options, signal));
  return fanOut(sources, options.signal, options.maxConcurrentCalls);
}

const callDone: IteratorResult<StreamPart[]> = Object.freeze({ value: undefined, done: true });

/**
 * One call: retried only while nothing the client could see has come out (usage-progress does not
 * count), shaped batch by batch, abandoned once every choice hit a gateway stop (closing its parts
 * ends the upstream request), and metered on every way out: done, abandoned, failed, or returned
 * early by the consumer (client cancel, a sibling call's failure).
 */
class CallRun implements AsyncIterableIterator<StreamPart[]> {
  private readonly call: PlannedCall;
  private readonly options: RunOptions;
  private readonly signal: AbortSignal;
  private readonly shaper: ChoiceShaper;
  private readonly usage: CallUsage;
  /** The current attempt's parts; null before an attempt starts. */
  private source: AsyncIterator<CallPart[]> | null = null;
  private attempt = 0;
  /** Whether this attempt produced anything the client could see. */
  private output = false;
  private closed = false;

  constructor(call: PlannedCall, options: RunOptions, signal: AbortSignal) {
    this.call = call;
    this.options = options;
    this.signal = signal;
    this.shaper = new ChoiceShaper(call);
    this.usage = new CallUsage(call);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<StreamPart[]>> {
    const shaper = this.shaper;
    while (!this.closed) {
      let shaped: StreamPart[];
      try {
        if (shaper.failure) throw shaper.failure;
        this.source ??= this.call.run(this.signal)[Symbol.asyncIterator]();
        const result = await this.source.next();
        if (result.done) {
          this.end(true);
          return callDone;
        }
        const batch = result.value;
        for (const part of batch) {
          this.usage.observe(part);
          if (part.type !== 'usage-progress') this.output = true;
        }
        shaped = shaper.shape(batch);
      } catch (error) {
        await this.closeSource();
        const delay = retryAfterFailure(error, this.attempt, this.output, this.options.retry, this.signal);
        if (delay === null) {
          this.end(false);
          throw error;
        }
        this.usage.endAttempt(false);
        this.attempt++;
        this.output = false;
        try {
          await sleep(delay, this.signal);
        } catch (aborted) {
          this.end(false);
          throw aborted;
        }
        continue;
      }
      if (shaper.abandoned) {
        // Every choice stopped: closing the parts ends the upstream request.
        await this.closeSource();
        this.end(true);
        return shaped.length > 0 ? { value: shaped, done: false } : callDone;
      }
      if (shaped.length > 0) return { value: shaped, done: false };
    }
    return callDone;
  }

  async return(): Promise<IteratorResult<StreamPart[]>> {
    await this.closeSource();
    this.end(false);
    return callDone;
  }

  /** Ends the call once: the last attempt's usage is added and the call's total reported. */
  private end(completed: boolean): void {
    if (this.closed) return;
    this.closed = true;
    this.usage.endAttempt(completed);
    this.options.reportUsage(this.usage.billed);
  }

  private async closeSource(): Promise<void> {
    const source = this.source;
    this.source = null;
    await source?.return?.();
  }
}
