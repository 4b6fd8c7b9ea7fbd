/** The soak: a fresh Tollgate under steady load for minutes, its RSS sampled to show whether memory stays flat. */
import { completionBody, startTollgate, type TollgateOptions } from './gateways.js';
import { runCannon } from './load-cannon.js';
import { memory } from './proc-readings.js';

/** One RSS reading, seconds into the measured window. */
export interface RssSample {
  atS: number;
  rssMiB: number;
}

/** The soak's figures. */
export interface SoakResult {
  minutes: number;
  requests: number;
  failed: number;
  requestsPerSecond: number;
  samples: RssSample[];
  rssStartMiB: number;
  rssEndMiB: number;
  rssMaxMiB: number;
  /** Least-squares slope of RSS over the soak, MiB per minute. */
  slopeMiBPerMinute: number;
}

function slopePerMinute(samples: RssSample[]): number {
  const meanX = samples.reduce((sum, sample) => sum + sample.atS, 0) / samples.length;
  const meanY = samples.reduce((sum, sample) => sum + sample.rssMiB, 0) / samples.length;
  let numerator = 0;
  let denominator = 0;
  for (const sample of samples) {
    numerator += (sample.atS - meanX) * (sample.rssMiB - meanY);
    denominator += (sample.atS - meanX) ** 2;
  }
  return denominator === 0 ? 0 : (numerator / denominator) * 60;
}

/** 16 connections alternating non-stream and stream requests for `minutes`, on a Tollgate started with `tollgateOptions`. */
export async function runSoak(tollgateOptions: TollgateOptions, minutes: number, log: (line: string) => void): Promise<SoakResult> {
  const tollgate = await startTollgate(tollgateOptions);
  try {
    const durationS = Math.max(1, Math.round(minutes * 60));
    const intervalMs = Math.min(10_000, Math.max(1_000, (durationS * 1000) / 60));
    const samples: RssSample[] = [];
    let started = 0;
    let sampler: NodeJS.Timeout | undefined;
    const sample = () => samples.push({ atS: (performance.now() - started) / 1000, rssMiB: memory(tollgate.process.pid).rssMiB });
    const result = await runCannon({
      target: { url: tollgate.url, headers: tollgate.headers },
      bodies: [completionBody(false), completionBody(true)],
      connections: 16,
      durationS,
      warmupS: Math.min(10, Math.max(3, durationS / 10)),
      recordLatency: false,
      onMeasuring: () => {
        started = performance.now();
        sample();
        sampler = setInterval(sample, intervalMs);
      },
    });
    clearInterval(sampler);
    sample();
    const rss = samples.map((entry) => entry.rssMiB);
    const soak: SoakResult = {
      minutes,
      requests: result.ok,
      failed: result.failed,
      requestsPerSecond: result.requestsPerSecond,
      samples,
      rssStartMiB: rss[0],
      rssEndMiB: rss[rss.length - 1],
      rssMaxMiB: Math.max(...rss),
      slopeMiBPerMinute: slopePerMinute(samples),
    };
    log(
      `  soak ${minutes} min: ${soak.requests} requests (${soak.requestsPerSecond.toFixed(0)}/s, ${soak.failed} failed), RSS ${soak.rssStartMiB.toFixed(1)} → ${soak.rssEndMiB.toFixed(1)} MiB (max ${soak.rssMaxMiB.toFixed(1)}, ${soak.slopeMiBPerMinute.toFixed(2)} MiB/min)`,
    );
    return soak;
  } finally {
    await tollgate.stop();
  }
}
