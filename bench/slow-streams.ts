/**
 * Many slow streams held open at once on a fresh Tollgate (a chunk every 200 ms from the mock):
 * whether all open, and the memory each costs.
 */
import { completionBody, startTollgate, type TollgateOptions } from './gateways.js';
import { runCannon } from './load-cannon.js';
import { openSlowStreams } from './load-slow-streams.js';
import { memory } from './proc-readings.js';

/** The slow-stream figures. */
export interface SlowStreamsResult {
  requested: number;
  opened: number;
  failed: number;
  /** Streams that ended before the hold was over (should be 0). */
  endedEarly: number;
  /** From the first request to the last stream's first byte, ms. */
  openMs: number;
  rssBeforeMiB: number;
  /** Highest RSS while all streams were open, MiB. */
  rssOpenMiB: number;
  rssAfterMiB: number;
  perStreamKiB: number;
  firstError: string | null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `count` streams on a Tollgate started with `tollgateOptions`, its upstream slowed down. */
export async function runSlowStreams(tollgateOptions: TollgateOptions, count: number, log: (line: string) => void): Promise<SlowStreamsResult> {
  const tollgate = await startTollgate({
    ...tollgateOptions,
    openaiBaseUrl: `${tollgateOptions.openaiBaseUrl}/delay-200`,
    // Tollgate pools 64 connections per upstream origin by default; more streams than that would queue.
    config: { vendors: { openai: { maxConnectionsPerOrigin: count + 64 } } },
  });
  try {
    const target = { url: tollgate.url, headers: tollgate.headers };
    await runCannon({ target, bodies: [completionBody(false)], connections: 16, durationS: 2, warmupS: 0, recordLatency: false });
    await sleep(500);
    const rssBeforeMiB = memory(tollgate.process.pid).rssMiB;
    let rssOpenMiB = 0;
    const sample = () => {
      rssOpenMiB = Math.max(rssOpenMiB, memory(tollgate.process.pid).rssMiB);
    };
    let sampler: NodeJS.Timeout | undefined;
    const result = await openSlowStreams({
      target,
      count,
      openTimeoutS: 15,
      holdS: 3,
      // 150 chunks 200 ms apart: each stream lasts 30 s, longer than opening and holding them all.
      body: completionBody(true, 150),
      onOpen: () => {
        sample();
        sampler = setInterval(sample, 200);
      },
    });
    clearInterval(sampler);
    await sleep(1_000);
    const rssAfterMiB = memory(tollgate.process.pid).rssMiB;
    const perStreamKiB = result.opened > 0 ? ((rssOpenMiB - rssBeforeMiB) * 1024) / result.opened : NaN;
    log(
      `  slow streams: ${result.opened}/${count} open in ${result.openMs.toFixed(0)} ms, RSS ${rssBeforeMiB.toFixed(1)} → ${rssOpenMiB.toFixed(1)} MiB (${perStreamKiB.toFixed(1)} KiB/stream), after ${rssAfterMiB.toFixed(1)} MiB${result.firstError ? `, first error: ${result.firstError}` : ''}`,
    );
    return {
      requested: count,
      opened: result.opened,
      failed: result.failed,
      endedEarly: result.endedEarly,
      openMs: result.openMs,
      rssBeforeMiB,
      rssOpenMiB,
      rssAfterMiB,
      perStreamKiB,
      firstError: result.firstError,
    };
  } finally {
    await tollgate.stop();
  }
}
