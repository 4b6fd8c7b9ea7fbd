/**
 * The one pipeline every adapter's `stream` ends in: each planned upstream call is retried (before
 * its first output), shaped (echo, stops, global indexes), and all calls are merged concurrently.
 */
import type { StreamPart } from '../types.js';
import type { CallPart } from './call-part.js';
import { fanOut } from './fan-out.js';
import { withRetry, type RetryOptions } from './retry.js';
import { shapeChoices, type CallShape } from './shape-choices.js';

export interface PlannedCall extends CallShape {
  run(signal: AbortSignal): AsyncIterable<CallPart[]>;
}

export interface RunOptions {
  signal: AbortSignal;
  retry: RetryOptions;
  maxConcurrentCalls: number;
}

export function runUpstreamCalls(calls: readonly PlannedCall[], options: RunOptions): AsyncIterable<StreamPart[]> {
  const sources = calls.map((call) => (signal: AbortSignal) => shapeChoices(withRetry(() => call.run(signal), options.retry, signal), call));
  return fanOut(sources, options.signal, options.maxConcurrentCalls);
}
