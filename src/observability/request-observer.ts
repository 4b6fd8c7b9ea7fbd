/** One log line and the metrics per completion request. Never logs prompts or keys. */
import type { CompletionRun } from '../completions/completion-pipeline.js';
import { pino } from 'pino';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';

export interface RequestObserver {
  started(run: CompletionRun): void;
  finished(run: CompletionRun, status: number): void;
}

export function createRequestObserver(logger: Logger, metrics: Metrics): RequestObserver {
  // The root logger's destination (createLogger's): the request line is written to it directly.
  const destination = (logger as unknown as Record<symbol, { write(line: string): unknown }>)[pino.symbols.streamSym];
  // A flag on the run, not a WeakSet of runs: collections keyed by the request kept whole
  // requests alive through young-generation GCs (README, "Objects that outlive their request").
  return {
    started(run) {
      if (run.parsed?.stream) {
        run.countedAsStream = true;
        metrics.inFlightStreams.inc();
      }
    },
    finished(run, status) {
      if (run.countedAsStream) {
        run.countedAsStream = false;
        metrics.inFlightStreams.dec();
      }
      const vendor = run.target?.resolved.adapter.name ?? 'none';
      const model = run.parsed?.model ?? 'unknown';
      const seconds = (performance.now() - run.startedAt) / 1000;
      const stream = run.parsed?.stream ?? false;
      metrics.requests.labels(vendor, run.target ? model : 'invalid', statusText(status)).inc();
      metrics.latency.labels(vendor, stream ? 'true' : 'false').observe(seconds);
      if (run.meter.firstTokenAt !== null) metrics.timeToFirstByte.labels(vendor).observe(run.meter.firstTokenAt / 1000);
      if (run.generationStartedAt !== null) metrics.gatewayOverhead.observe((run.generationStartedAt - run.startedAt) / 1000);
      const usage = run.settledUsage;
      if (usage) {
        metrics.tokens.labels(run.caller.account.id, model, 'prompt').inc(usage.promptTokens);
        metrics.tokens.labels(run.caller.account.id, model, 'completion').inc(usage.completionTokens);
      }
      if (logger.isLevelEnabled('info')) {
        const ttftMs = run.meter.firstTokenAt === null ? 'null' : tenths(run.meter.firstTokenAt);
        // The line pino would write for logger.info({ requestId, …, ttftMs }, 'completion'), field for
        // field, built in one template: pino's generic serialiser cost ~5 µs a request here
        // (bench/compare-builds). Strings go through JSON.stringify (those that repeat from line to line
        // once, see `quoted`); the rest are numbers, booleans, null.
        destination.write(`{"level":30,"time":${Date.now()},"requestId":${JSON.stringify(run.requestId)},"completionId":${JSON.stringify(run.completionId)},"account":${quoted(run.caller.account.id)},"keyId":${run.caller.keyId === null ? 'null' : quoted(run.caller.keyId)},"model":${quoted(model)},"vendor":${quoted(vendor)},"stream":${stream},"status":${status},"promptTokens":${usage?.promptTokens ?? 0},"completionTokens":${usage?.completionTokens ?? 0},"estimated":${usage?.estimated ?? false},"latencyMs":${tenths(seconds * 1000)},"ttftMs":${ttftMs},"msg":"completion"}\n`);
      }
    },
  };
}

/**
 * `String(Math.round(ms * 10) / 10)`, the same text, without turning a fractional number into
 * text (V8's shortest round-trip formatting, the costliest part of the line): the tenths are an
 * integer, written as its whole part and one digit. The division's result is the double nearest
 * to `whole.digit`, whose shortest text is that (or `whole` for a zero digit); numbers too large
 * for that to hold, or not numbers, take the general path.
 */
export function tenths(ms: number): string {
  const scaled = Math.round(ms * 10);
  if (!(scaled >= 0 && scaled < 1e15)) return String(scaled / 10);
  const digit = scaled % 10;
  const whole = (scaled - digit) / 10;
  return digit === 0 ? `${whole}` : `${whole}.${digit}`;
}

/**
 * `JSON.stringify(text)` for the strings that repeat from one request's line to the next (account,
 * key, model, vendor), kept instead of quoted again for every line. Short strings only (a model
 * name is the caller's text), and at most 1,024 of them before the cache starts over.
 */
const quotedTexts = new Map<string, string>();
function quoted(text: string): string {
  let json = quotedTexts.get(text);
  if (json === undefined) {
    json = JSON.stringify(text);
    if (text.length <= 256) {
      if (quotedTexts.size >= 1_024) quotedTexts.clear();
      quotedTexts.set(text, json);
    }
  }
  return json;
}

const statusTexts = new Map<number, string>();
function statusText(status: number): string {
  let text = statusTexts.get(status);
  if (!text) statusTexts.set(status, (text = String(status)));
  return text;
}
