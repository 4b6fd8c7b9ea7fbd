/**
 * The one pipeline every adapter's `stream` ends in: each planned upstream call is retried (before
 * its first output), shaped (echo, stops, global indexes), and all calls are merged concurrently.
 * Retry and shaping share one generator per call, so a batch crosses as few async layers as it can.
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
 * count), shaped batch by batch, and abandoned — its socket destroyed by leaving the loop — once
 * every choice hit a gateway stop, with the usage estimate sent last.
 */
async function* runCall(call: PlannedCall, retry: RetryOptions, signal: AbortSignal): AsyncGenerator<StreamPart[]> {
  const shaper = new ChoiceShaper(call);
  for (let attempt = 0; ; attempt++) {
    let output = false;
    let last: StreamPart[] | null = null;
    try {
      for await (const batch of call.run(signal)) {
        if (!output && batch.some((part) => part.type !== 'usage-progress')) output = true;
        const shaped = shaper.shape(batch);
        if (shaper.abandoned) {
          last = shaped;
          break;
        }
        if (shaped.length > 0) yield shaped;
      }
    } catch (error) {
      const delay = retryAfterFailure(error, attempt, output, retry, signal);
      if (delay === null) throw error;
      await sleep(delay, signal);
      continue;
    }
    if (last) {
      last.push(...shaper.closing());
      if (last.length > 0) yield last;
    }
    return;
  }
}
