/**
 * Stream jobs of the load generator, on undici: time to first byte, many slow streams held open,
 * and token throughput. Every loop ends by a deadline; every request has a timeout.
 */
import { Pool } from 'undici';
import type { SlowJob, SlowResult, Target, TokensJob, TokensResult, TtfbJob, TtfbResult } from './load-protocol.js';
import { Samples } from './stats.js';

function poolFor(target: Target, connections: number): { pool: Pool; path: string; headers: Record<string, string> } {
  const url = new URL(target.url);
  const pool = new Pool(url.origin, { connections, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 60_000, bodyTimeout: 60_000 });
  return { pool, path: `${url.pathname}${url.search}`, headers: { 'content-type': 'application/json', ...target.headers } };
}

interface StreamTiming {
  ok: boolean;
  firstByteMs: number;
  totalMs: number;
  text: string;
  error: string | null;
}

/** One request; `keepText` keeps the whole body (else only the tail, to check for `[DONE]`). */
async function timedStream(pool: Pool, path: string, headers: Record<string, string>, body: string, keepText: boolean, timeoutMs: number): Promise<StreamTiming> {
  const started = performance.now();
  let firstByte = -1;
  let text = '';
  try {
    const response = await pool.request({ path, method: 'POST', headers, body, signal: AbortSignal.timeout(timeoutMs) });
    for await (const chunk of response.body) {
      if (firstByte < 0) firstByte = performance.now();
      text = keepText ? text + chunk.toString('utf8') : (text + chunk.toString('utf8')).slice(-256);
    }
    const ok = response.statusCode === 200 && text.includes('[DONE]') && !text.includes('"error":{');
    return { ok, firstByteMs: firstByte - started, totalMs: performance.now() - started, text, error: ok ? null : `status ${response.statusCode}: ${text.slice(-200)}` };
  } catch (error) {
    return { ok: false, firstByteMs: -1, totalMs: performance.now() - started, text, error: (error as Error).message };
  }
}

export async function runTtfb(job: TtfbJob, onMeasuring: () => void): Promise<TtfbResult> {
  const { pool, path, headers } = poolFor(job.target, job.connections);
  const ttfb = new Samples();
  const total = new Samples();
  let ok = 0;
  let failed = 0;
  let measuring = false;
  const loop = async (deadline: number) => {
    while (performance.now() < deadline) {
      const timing = await timedStream(pool, path, headers, job.body, false, 30_000);
      if (!measuring) continue;
      if (!timing.ok) { failed++; continue; }
      ok++;
      ttfb.add(timing.firstByteMs);
      total.add(timing.totalMs);
    }
  };
  try {
    const warmEnd = performance.now() + job.warmupS * 1000;
    await Promise.all(Array.from({ length: job.connections }, () => loop(warmEnd)));
    measuring = true;
    onMeasuring();
    const started = performance.now();
    await Promise.all(Array.from({ length: job.connections }, () => loop(started + job.durationS * 1000)));
    const elapsedS = (performance.now() - started) / 1000;
    return { kind: 'ttfb', ok, failed, requestsPerSecond: ok / elapsedS, ttfb: ttfb.summary(), total: total.summary() };
  } finally {
    await pool.destroy();
  }
}

export async function runSlow(job: SlowJob, onOpen: (opened: number, failed: number) => void): Promise<SlowResult> {
  const { pool, path, headers } = poolFor(job.target, job.count);
  const controllers: AbortController[] = [];
  let opened = 0;
  let failed = 0;
  let endedEarly = 0;
  let holding = true;
  let firstError: string | null = null;
  let lastOpen = 0;
  const started = performance.now();
  let allOpen: () => void = () => {};
  const allSettled = new Promise<void>((resolve) => { allOpen = resolve; });
  const settle = () => { if (opened + failed === job.count) allOpen(); };
  const one = async () => {
    const controller = new AbortController();
    controllers.push(controller);
    let counted = false;
    try {
      const response = await pool.request({ path, method: 'POST', headers, body: job.body, signal: controller.signal });
      if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}: ${(await response.body.text()).slice(0, 200)}`);
      for await (const _chunk of response.body) {
        if (counted) continue;
        counted = true;
        opened++;
        lastOpen = performance.now();
        settle();
      }
      if (holding) endedEarly++;
    } catch (error) {
      if (controller.signal.aborted) return;
      if (!counted) {
        failed++;
        firstError ??= (error as Error).message;
        settle();
      }
    }
  };
  const streams = Array.from({ length: job.count }, one);
  try {
    await Promise.race([allSettled, new Promise((resolve) => setTimeout(resolve, job.openTimeoutS * 1000))]);
    onOpen(opened, failed);
    await new Promise((resolve) => setTimeout(resolve, job.holdS * 1000));
    holding = false;
    for (const controller of controllers) controller.abort();
    await Promise.race([Promise.allSettled(streams), new Promise((resolve) => setTimeout(resolve, 10_000))]);
    return { kind: 'slow', opened, failed: job.count - opened, endedEarly, openMs: lastOpen - started, firstError };
  } finally {
    await pool.destroy();
  }
}

export async function runTokens(job: TokensJob): Promise<TokensResult> {
  const { pool, path, headers } = poolFor(job.target, job.concurrency);
  const firstByte = new Samples();
  let streams = 0;
  let failed = 0;
  let completionTokens = 0;
  let rateSum = 0;
  let firstError: string | null = null;
  const started = performance.now();
  const deadline = started + job.durationS * 1000;
  const loop = async () => {
    while (performance.now() < deadline) {
      const timing = await timedStream(pool, path, headers, job.body, true, 120_000);
      const matches = [...timing.text.matchAll(/"completion_tokens":(\d+)/g)];
      const tokens = Number(matches.at(-1)?.[1] ?? NaN);
      if (!timing.ok || !Number.isFinite(tokens)) {
        failed++;
        firstError ??= timing.error ?? 'no usage in the stream';
        if (failed > 100) return;
        continue;
      }
      streams++;
      completionTokens += tokens;
      rateSum += tokens / (timing.totalMs / 1000);
      firstByte.add(timing.firstByteMs);
    }
  };
  try {
    await Promise.all(Array.from({ length: job.concurrency }, loop));
    const wallS = (performance.now() - started) / 1000;
    return {
      kind: 'tokens', streams, failed, completionTokens, wallS,
      tokensPerSecond: completionTokens / wallS,
      perStreamTokensPerSecond: streams > 0 ? rateSum / streams : 0,
      firstByte: firstByte.summary(),
      firstError,
    };
  } finally {
    await pool.destroy();
  }
}
