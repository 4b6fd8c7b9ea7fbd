/**
 * The one pipeline every adapter's `stream` ends in: each planned upstream call is retried (before
 * its first output), shaped (echo, stops, global indexes), and all calls are merged concurrently.
 * Retry and shaping share one iterator per call, so a batch crosses as few async layers as it can.
 */
import type { StreamPart } from '../types.js';
import { sleep } from './abort.js';
import type { CallPart } from './call-part.js';
import { fanOut } from './fan-out.js';
import { retryAfterFailure, type RetryOptions } from './retry.js';
import { ChoiceShaper, type CallShape } from './shape-choices.js';

export interface PlannedCall extends CallShape {
  run(signal: AbortSignal): AsyncIterable<CallPart[]>;
}

export interface RunOptions {
  signal: AbortSignal;
  retry: RetryOptions;
  maxConcurrentCalls: number;
}

export function runUpstreamCalls(calls: readonly PlannedCall[], options: RunOptions): AsyncIterable<StreamPart[]> {
  const sources = calls.map((call) => (signal: AbortSignal) => runCall(call, options.retry, signal));
  return fanOut(sources, options.signal, options.maxConcurrentCalls);
}

/**
 * One call: retried only while nothing the client could see has come out (usage-progress does not
 * count), shaped batch by batch, and abandoned — its socket destroyed by closing its parts — once
 * every choice hit a gateway stop, with the usage estimate sent last.
 */
function runCall(call: PlannedCall, retry: RetryOptions, signal: AbortSignal): AsyncIterableIterator<StreamPart[]> {
  return new CallRun(call, retry, signal);
}

const callDone: IteratorResult<StreamPart[]> = Object.freeze({ value: undefined, done: true });

/**
 * `runCall` as an iterator written by hand rather than an async generator: a stream takes one step
 * through it per read of the model's output, and a generator's suspend-and-resume per step cost
 * more than the step's own work (see upstream-body-chunks.ts).
 */
class CallRun implements AsyncIterableIterator<StreamPart[]> {
  private readonly call: PlannedCall;
  private readonly retry: RetryOptions;
  private readonly signal: AbortSignal;
  private readonly shaper: ChoiceShaper;
  /** The current attempt's parts; null before an attempt starts. */
  private source: AsyncIterator<CallPart[]> | null = null;
  private attempt = 0;
  /** Whether this attempt produced anything the client could see. */
  private output = false;
  private closed = false;

  constructor(call: PlannedCall, retry: RetryOptions, signal: AbortSignal) {
    this.call = call;
    this.retry = retry;
    this.signal = signal;
    this.shaper = new ChoiceShaper(call);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<StreamPart[]>> {
    const shaper = this.shaper;
    while (!this.closed) {
      let shaped: StreamPart[];
      try {
        this.source ??= this.call.run(this.signal)[Symbol.asyncIterator]();
        const result = await this.source.next();
        if (result.done) {
          this.closed = true;
          return callDone;
        }
        const batch = result.value;
        if (!this.output && batch.some((part) => part.type !== 'usage-progress')) this.output = true;
        shaped = shaper.shape(batch);
      } catch (error) {
        await this.closeSource();
        const delay = retryAfterFailure(error, this.attempt, this.output, this.retry, this.signal);
        if (delay === null) {
          this.closed = true;
          throw error;
        }
        this.attempt++;
        this.output = false;
        try {
          await sleep(delay, this.signal);
        } catch (aborted) {
          this.closed = true;
          throw aborted;
        }
        continue;
      }
      if (shaper.abandoned) {
        // Every choice stopped: closing the parts ends the upstream request; the estimate goes last.
        this.closed = true;
        await this.closeSource();
        shaped.push(...shaper.closing());
        return shaped.length > 0 ? { value: shaped, done: false } : callDone;
      }
      if (shaped.length > 0) return { value: shaped, done: false };
    }
    return callDone;
  }

  async return(): Promise<IteratorResult<StreamPart[]>> {
    this.closed = true;
    await this.closeSource();
    return callDone;
  }

  private async closeSource(): Promise<void> {
    const source = this.source;
    this.source = null;
    await source?.return?.();
  }
}
