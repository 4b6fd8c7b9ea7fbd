/**
 * Two Tollgate builds side by side, for a change too small for whole benchmark runs to see: both
 * run on the gateway core at once (only one under load at a time) and take turns in short slices
 * against the same mock, so the machine's drift over seconds hits both alike.
 *
 *   node dist/bench/compare-builds.js --baseline /path/to/old/dist [--candidate DIR] [--mode json|stream|ttfb]
 *        [--rounds 7] [--slice 3] [--connections 16] [--baseline-env K=V,…] [--env K=V,…]
 *
 * The baseline is another checkout's `dist` directory (`git worktree add` + `npm ci` + build); the
 * candidate is this build unless `--candidate` names another. `--env` / `--baseline-env` set
 * environment for one side only, to weigh a setting instead of a change. Prints each slice and
 * the medians over slices: requests/s, CPU and GC µs per request, latency p50/p99, each side's
 * peak RSS at the end, and the candidate's change in percent. `--mode ttfb` times the first body
 * byte of streams instead (the benchmark's first-byte cell) and runs the floor proxy as a third
 * side, since that target is a difference from the floor.
 */
import { resolve } from 'node:path';
import { checkGateway, gatewayCore, loadCore, startFloor, startMock, startTollgate, type Gateway } from './gateways.js';
import { startLoadClient } from './load-client.js';
import { measureCell, measureTtfb, type Cell, type Mode } from './matrix.js';
import type { TtfbResult } from './load-protocol.js';
import { entryOf, parseEnv } from './build-options.js';
import { guardChildren, killAll, memory, pinSelf, tasksetAvailable } from './processes.js';

interface Options {
  baseline: string;
  candidate: string | null;
  mode: Mode | 'ttfb';
  rounds: number;
  sliceS: number;
  connections: number;
  baselineEnv: Record<string, string>;
  env: Record<string, string>;
}

function parseArgs(argv: string[]): Options {
  const options: Options = { baseline: '', candidate: null, mode: 'json', rounds: 7, sliceS: 3, connections: 16, baselineEnv: {}, env: {} };
  for (let index = 0; index < argv.length; index++) {
    const value = () => {
      const next = argv[++index];
      if (next === undefined) throw new Error(`${argv[index - 1]} needs a value`);
      return next;
    };
    switch (argv[index]) {
      case '--baseline': options.baseline = resolve(value()); break;
      case '--candidate': options.candidate = resolve(value()); break;
      case '--mode': { const mode = value(); options.mode = mode === 'stream' || mode === 'ttfb' ? mode : 'json'; break; }
      case '--rounds': options.rounds = Math.max(1, Math.min(50, Number(value()) || 7)); break;
      case '--slice': options.sliceS = Math.max(0.5, Math.min(30, Number(value()) || 3)); break;
      case '--connections': options.connections = Math.max(1, Math.min(256, Number(value()) || 16)); break;
      case '--baseline-env': options.baselineEnv = parseEnv(value()); break;
      case '--env': options.env = parseEnv(value()); break;
      default: throw new Error(`unknown option ${argv[index]} (see the comment at the top of bench/compare-builds.ts)`);
    }
  }
  if (!options.baseline) throw new Error('--baseline DIST_DIR is required');
  return options;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const baselineEntry = entryOf(options.baseline);
  const candidateEntry = options.candidate ? entryOf(options.candidate) : undefined;
  guardChildren();
  const pinned = tasksetAvailable && pinSelf(loadCore);
  const log = (line: string) => process.stdout.write(`${line}\n`);
  log(`compare-builds: ${options.mode}, ${options.connections} connections, ${options.rounds} rounds of ${options.sliceS} s slices${pinned ? ', gateway on core 0' : ', NOT PINNED'}`);
  const mock = await startMock(pinned ? loadCore : null);
  const load = await startLoadClient(pinned ? loadCore : null);
  const gateways: Gateway[] = [];
  try {
    const sides = [
      { label: 'baseline', entry: baselineEntry, env: options.baselineEnv },
      { label: 'candidate', entry: candidateEntry, env: options.env },
    ];
    for (const side of sides) {
      const gateway = await startTollgate({ core: pinned ? gatewayCore : null, openaiBaseUrl: mock.origin, logLevel: 'info', entry: side.entry, env: side.env });
      await checkGateway(gateway);
      gateways.push(gateway);
    }
    const matrix = { connections: [options.connections], durationS: options.sliceS, warmupS: 0.5, ttfbConnections: options.connections, log };
    if (options.mode === 'ttfb') {
      const floor = await startFloor(pinned ? gatewayCore : null, mock.origin);
      gateways.push(floor);
      await compareTtfb(load, [...sides.map((side) => side.label), 'floor'], gateways, options, log);
      return;
    }
    const mode = options.mode;
    for (const gateway of gateways) await measureCell(load, gateway, mode, options.connections, { ...matrix, durationS: 3, warmupS: 0 }, true);
    const cells: Cell[][] = [[], []];
    for (let round = 0; round < options.rounds; round++) {
      // Alternate which side goes first so neither always follows the other's heat.
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      for (const index of order) cells[index].push(await measureCell(load, gateways[index], mode, options.connections, matrix, true));
      log(`  round ${round + 1}: ${sides.map((side, index) => `${side.label} ${cells[index][round].requestsPerSecond.toFixed(0)} r/s ${cells[index][round].cpuMicrosPerRequest.toFixed(1)} µs`).join('   ')}`);
    }
    const summary = cells.map((list) => ({
      rps: median(list.map((cell) => cell.requestsPerSecond)),
      cpu: median(list.map((cell) => cell.cpuMicrosPerRequest)),
      gc: median(list.map((cell) => (cell.gcMicrosPerRequest ? cell.gcMicrosPerRequest.minor + cell.gcMicrosPerRequest.major : NaN))),
      p50: median(list.map((cell) => cell.latency?.p50 ?? NaN)),
      p99: median(list.map((cell) => cell.latency?.p99 ?? NaN)),
      failed: list.reduce((sum, cell) => sum + cell.failed, 0),
    }));
    for (const [index, side] of sides.entries()) {
      const s = summary[index];
      const peak = memory(gateways[index].process.pid).peakMiB;
      log(`${side.label.padEnd(9)} median ${s.rps.toFixed(0)} r/s  ${s.cpu.toFixed(1)} µs CPU/req  ${s.gc.toFixed(1)} µs GC/req  latency p50 ${s.p50.toFixed(2)} ms p99 ${s.p99.toFixed(2)} ms  peak RSS ${peak.toFixed(1)} MiB${s.failed ? `  FAILED ${s.failed}` : ''}`);
    }
    const [a, b] = summary;
    log(`candidate vs baseline: throughput ${(((b.rps / a.rps) - 1) * 100).toFixed(1)}%, CPU per request ${(((b.cpu / a.cpu) - 1) * 100).toFixed(1)}%`);
  } finally {
    for (const gateway of gateways) await gateway.stop();
    await load.stop();
    await mock.process.stop();
  }
}

/** First-byte slices in turn for every side; medians of each slice's p50 and p99, and each build's difference from the floor. */
async function compareTtfb(load: Parameters<typeof measureTtfb>[0], labels: string[], gateways: Gateway[], options: Options, log: (line: string) => void): Promise<void> {
  for (const gateway of gateways) await measureTtfb(load, gateway, 2, 0, options.connections);
  const slices: TtfbResult[][] = gateways.map(() => []);
  for (let round = 0; round < options.rounds; round++) {
    const order = gateways.map((_, index) => (index + round) % gateways.length);
    for (const index of order) slices[index].push(await measureTtfb(load, gateways[index], options.sliceS, 0.5, options.connections));
    log(`  round ${round + 1}: ${labels.map((label, index) => `${label} ${slices[index][round].ttfb?.p50.toFixed(2) ?? '-'} ms (${slices[index][round].requestsPerSecond.toFixed(0)} r/s, ${slices[index][round].cpuMicrosPerRequest?.toFixed(0) ?? '-'} µs)`).join('   ')}`);
  }
  const floorP50 = median(slices[slices.length - 1].map((slice) => slice.ttfb?.p50 ?? NaN));
  for (const [index, label] of labels.entries()) {
    const p50 = median(slices[index].map((slice) => slice.ttfb?.p50 ?? NaN));
    const p99 = median(slices[index].map((slice) => slice.ttfb?.p99 ?? NaN));
    const rps = median(slices[index].map((slice) => slice.requestsPerSecond));
    const cpu = median(slices[index].map((slice) => slice.cpuMicrosPerRequest ?? NaN));
    const core = median(slices[index].map((slice) => slice.cpuUtilisation ?? NaN));
    const failed = slices[index].reduce((sum, slice) => sum + slice.failed, 0);
    const over = index < labels.length - 1 ? `  ${(p50 - floorP50 >= 0 ? '+' : '')}${(p50 - floorP50).toFixed(2)} ms over the floor` : '';
    log(`${label.padEnd(9)} median first byte p50 ${p50.toFixed(2)} ms p99 ${p99.toFixed(2)} ms  ${rps.toFixed(0)} r/s  ${cpu.toFixed(1)} µs CPU/req (${(core * 100).toFixed(0)}% core)${over}${failed ? `  FAILED ${failed}` : ''}`);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`compare-builds failed: ${(error as Error).stack ?? error}\n`);
    killAll();
    process.exit(1);
  },
);
