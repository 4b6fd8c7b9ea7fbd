/**
 * The scenarios beside the matrix, each on a fresh Tollgate: many slow streams held open (memory
 * per stream), a soak (memory flat over time), the ledger's insert rate, and the local model's
 * token throughput.
 */
import { fileURLToPath } from 'node:url';
import { completionBody, gatewayCore, localModel, startTollgate, type Gateway } from './gateways.js';
import type { LedgerRateResult } from './ledger-rate.js';
import type { LoadClient } from './load-client.js';
import type { CannonResult, SlowResult, TokensResult } from './load-protocol.js';
import { memory, spawnProcess } from './processes.js';

export interface SlowStreamsResult {
  requested: number;
  opened: number;
  failed: number;
  endedEarly: number;
  openMs: number;
  rssBeforeMiB: number;
  /** Highest RSS while all streams were open, MiB. */
  rssOpenMiB: number;
  rssAfterMiB: number;
  perStreamKiB: number;
  firstError: string | null;
}

export interface SoakResult {
  minutes: number;
  requests: number;
  failed: number;
  requestsPerSecond: number;
  samples: { atS: number; rssMiB: number }[];
  rssStartMiB: number;
  rssEndMiB: number;
  rssMaxMiB: number;
  /** Least-squares slope of RSS over the soak, MiB per minute. */
  slopeMiBPerMinute: number;
}

export interface TokensReport {
  startupMs: number;
  single: TokensResult;
  concurrent: TokensResult;
}

type Log = (line: string) => void;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function warm(load: LoadClient, gateway: Gateway, seconds: number): Promise<void> {
  await load.run<CannonResult>({
    kind: 'cannon', target: { url: gateway.url, headers: gateway.headers }, bodies: [completionBody(false)],
    connections: 16, durationS: seconds, warmupS: 0, recordLatency: false,
  }, (seconds + 60) * 1000);
}

export async function runSlowStreams(load: LoadClient, mockOrigin: string, count: number, logLevel: string, log: Log): Promise<SlowStreamsResult> {
  // Tollgate's default is 64 pooled connections per upstream origin; more streams than that would queue.
  const tollgate = await startTollgate({
    core: gatewayCore, openaiBaseUrl: `${mockOrigin}/delay-200`, logLevel,
    config: { vendors: { openai: { maxConnectionsPerOrigin: count + 64 } } },
  });
  try {
    await warm(load, tollgate, 2);
    await sleep(500);
    const rssBeforeMiB = memory(tollgate.process.pid).rssMiB;
    let rssOpenMiB = 0;
    let sampler: NodeJS.Timeout | null = null;
    const result = await load.run<SlowResult>({
      kind: 'slow', target: { url: tollgate.url, headers: tollgate.headers },
      // 150 chunks 200 ms apart: each stream lasts 30 s, longer than opening and holding them.
      body: completionBody(true, undefined, 150), count, openTimeoutS: 15, holdS: 3,
    }, 90_000, {
      onOpen: () => {
        const sample = () => { rssOpenMiB = Math.max(rssOpenMiB, memory(tollgate.process.pid).rssMiB); };
        sample();
        sampler = setInterval(sample, 200);
      },
    });
    if (sampler) clearInterval(sampler);
    await sleep(1_000);
    const rssAfterMiB = memory(tollgate.process.pid).rssMiB;
    const perStreamKiB = result.opened > 0 ? ((rssOpenMiB - rssBeforeMiB) * 1024) / result.opened : NaN;
    log(`  slow streams: ${result.opened}/${count} open in ${result.openMs.toFixed(0)} ms, RSS ${rssBeforeMiB.toFixed(1)} → ${rssOpenMiB.toFixed(1)} MiB (${perStreamKiB.toFixed(1)} KiB/stream), after ${rssAfterMiB.toFixed(1)} MiB${result.firstError ? `, first error: ${result.firstError}` : ''}`);
    return { requested: count, opened: result.opened, failed: result.failed, endedEarly: result.endedEarly, openMs: result.openMs, rssBeforeMiB, rssOpenMiB, rssAfterMiB, perStreamKiB, firstError: result.firstError };
  } finally {
    await tollgate.stop();
  }
}

function slope(samples: { atS: number; rssMiB: number }[]): number {
  if (samples.length < 2) return 0;
  const n = samples.length;
  const meanX = samples.reduce((sum, sample) => sum + sample.atS, 0) / n;
  const meanY = samples.reduce((sum, sample) => sum + sample.rssMiB, 0) / n;
  let numerator = 0;
  let denominator = 0;
  for (const sample of samples) {
    numerator += (sample.atS - meanX) * (sample.rssMiB - meanY);
    denominator += (sample.atS - meanX) ** 2;
  }
  return denominator === 0 ? 0 : (numerator / denominator) * 60;
}

export async function runSoak(load: LoadClient, mockOrigin: string, minutes: number, logLevel: string, log: Log): Promise<SoakResult> {
  const tollgate = await startTollgate({ core: gatewayCore, openaiBaseUrl: mockOrigin, logLevel });
  try {
    const durationS = Math.max(1, Math.round(minutes * 60));
    const intervalMs = Math.min(10_000, Math.max(1_000, (durationS * 1000) / 60));
    const samples: { atS: number; rssMiB: number }[] = [];
    let started = 0;
    let sampler: NodeJS.Timeout | null = null;
    const sample = () => samples.push({ atS: (performance.now() - started) / 1000, rssMiB: memory(tollgate.process.pid).rssMiB });
    const result = await load.run<CannonResult>({
      kind: 'cannon', target: { url: tollgate.url, headers: tollgate.headers },
      bodies: [completionBody(false), completionBody(true)], connections: 16,
      durationS, warmupS: Math.min(10, Math.max(3, durationS / 10)), recordLatency: false,
    }, (durationS + 120) * 1000, {
      onMeasuring: () => { started = performance.now(); sample(); sampler = setInterval(sample, intervalMs); },
    });
    if (sampler) clearInterval(sampler);
    sample();
    const rss = samples.map((entry) => entry.rssMiB);
    const soak: SoakResult = {
      minutes, requests: result.ok, failed: result.non2xx + result.errors + result.timeouts, requestsPerSecond: result.requestsPerSecond,
      samples, rssStartMiB: rss[0], rssEndMiB: rss[rss.length - 1], rssMaxMiB: Math.max(...rss), slopeMiBPerMinute: slope(samples),
    };
    log(`  soak ${minutes} min: ${soak.requests} requests (${soak.requestsPerSecond.toFixed(0)}/s, ${soak.failed} failed), RSS ${soak.rssStartMiB.toFixed(1)} → ${soak.rssEndMiB.toFixed(1)} MiB (max ${soak.rssMaxMiB.toFixed(1)}, ${soak.slopeMiBPerMinute.toFixed(2)} MiB/min)`);
    return soak;
  } finally {
    await tollgate.stop();
  }
}

export async function runLedgerRate(records: number, log: Log): Promise<LedgerRateResult> {
  const child = spawnProcess({ name: 'ledger rate', core: gatewayCore, args: [fileURLToPath(new URL('./ledger-rate.js', import.meta.url)), String(records)] });
  try {
    const { match } = await child.waitFor(/^\{.*\}$/m, 120_000);
    const result = JSON.parse(match[0]) as LedgerRateResult;
    log(`  ledger: ${result.records} sequential inserts in ${result.seconds.toFixed(2)} s = ${result.perSecond.toFixed(0)}/s (p50 ${(result.p50Ms * 1000).toFixed(0)} µs, p99 ${(result.p99Ms * 1000).toFixed(0)} µs)`);
    return result;
  } finally {
    await child.stop();
  }
}

export async function runTokens(load: LoadClient, mockOrigin: string, durationS: number, logLevel: string, log: Log): Promise<TokensReport> {
  const tollgate = await startTollgate({ core: gatewayCore, openaiBaseUrl: mockOrigin, logLevel });
  try {
    const target = { url: tollgate.url, headers: tollgate.headers };
    const body = JSON.stringify({ model: localModel, prompt: 'The state of the union is', max_tokens: 256, stream: true, stream_options: { include_usage: true } });
    // One short warm-up generation (loads the model, JIT).
    await load.run<TokensResult>({ kind: 'tokens', target, body, concurrency: 1, durationS: 0.5 }, 180_000);
    const run = async (concurrency: number) => {
      const result = await load.run<TokensResult>({ kind: 'tokens', target, body, concurrency, durationS }, (durationS + 240) * 1000);
      log(`  local model x${concurrency}: ${result.streams} streams, ${result.completionTokens} tokens in ${result.wallS.toFixed(1)} s = ${result.tokensPerSecond.toFixed(0)} tokens/s (per stream ${result.perStreamTokensPerSecond.toFixed(0)}/s, first byte p50 ${result.firstByte?.p50.toFixed(1) ?? '-'} ms)${result.firstError ? `, first error: ${result.firstError}` : ''}`);
      return result;
    };
    const single = await run(1);
    const concurrent = await run(16);
    return { startupMs: tollgate.startupMs, single, concurrent };
  } finally {
    await tollgate.stop();
  }
}
