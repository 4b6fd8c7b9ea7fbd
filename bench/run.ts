/**
 * `npm run bench`: what Tollgate adds over a bare pass-through proxy (the floor) and over calling
 * the upstream directly, all on 127.0.0.1 against a fast mock OpenAI upstream, and whether it holds
 * its guards. The gateway under test runs alone on core 0; the mock and this process, which
 * generates the load, share core 1. Results: a report on stdout and JSON in dist/bench-results/ (see --help).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { dirname } from 'node:path';
import { parseBenchOptions, usage, type BenchOptions } from './bench-options.js';
import {
  checkGateway,
  directGateway,
  gatewayCore,
  loadCore,
  startFloor,
  startMock,
  startTollgate,
  type Gateway,
  type Mock,
  type TollgateOptions,
} from './gateways.js';
import { guardVerdicts } from './guards.js';
import { runLedgerRate } from './ledger-rate.js';
import { runMatrix, type TargetRun } from './matrix.js';
import { guardChildren, killAll, pinSelf, tasksetAvailable } from './processes.js';
import { compare, formatReport } from './report.js';
import { runSlowStreams } from './slow-streams.js';
import { runSoak } from './soak.js';

const log = (line: string) => process.stdout.write(`${line}\n`);

/** Upper bound on the whole run, s; past it everything is killed. */
function budgetSeconds(options: BenchOptions): number {
  const sliceS = Math.max(0.5, options.durationS / options.rounds);
  const perTarget = 2 * (Math.max(2, 2 * options.warmupS) + 5) + 2 * options.connections.length * (options.warmupS + options.rounds * (sliceS + 4));
  return options.targets.length * perTarget + 120 + options.soakMinutes * 60 + 150 + 150 + 120;
}

/** Starts the matrix's targets one by one, checks each answers, and measures them all in alternating slices. */
async function measureMatrix(options: BenchOptions, mock: Mock, tollgateOptions: TollgateOptions): Promise<TargetRun[]> {
  const starters: Record<string, () => Promise<Gateway>> = {
    direct: async () => directGateway(mock),
    floor: () => startFloor(tollgateOptions.core, mock.origin),
    stack: () => startFloor(tollgateOptions.core, mock.origin, 'stack'),
    tollgate: () => startTollgate(tollgateOptions),
  };
  const gateways: Gateway[] = [];
  try {
    for (const [name, start] of Object.entries(starters)) {
      if (!options.targets.includes(name)) continue;
      const gateway = await start();
      gateways.push(gateway);
      await checkGateway(gateway);
    }
    log(
      `\n${gateways.map((gateway) => gateway.name).join(', ')}, interleaved: ${options.rounds} slices of ${(options.durationS / options.rounds).toFixed(1)} s per cell and target, median slice reported`,
    );
    return await runMatrix(gateways, { connections: options.connections, durationS: options.durationS, warmupS: options.warmupS, rounds: options.rounds, log });
  } finally {
    for (const gateway of gateways) await gateway.stop();
  }
}

/** Runs a phase under its heading, or skips it (null). */
async function phase<T>(enabled: boolean, heading: string, run: () => Promise<T>): Promise<T | null> {
  if (!enabled) return null;
  log(`\n${heading}`);
  return run();
}

async function main(): Promise<void> {
  let options: BenchOptions | null;
  try {
    options = parseBenchOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`bench: ${error instanceof Error ? error.message : error}\n${usage}\n`);
    process.exit(2);
  }
  if (!options) {
    log(usage);
    return;
  }
  guardChildren();
  const budget = budgetSeconds(options);
  setTimeout(() => {
    process.stderr.write(`bench: exceeded its time budget of ${budget} s, stopping\n`);
    killAll();
    process.exit(2);
  }, budget * 1000).unref();
  const cores = availableParallelism();
  const pinned = tasksetAvailable && cores >= 2 && pinSelf(loadCore);
  const meta = {
    startedAt: new Date().toISOString(),
    node: process.version,
    cpu: cpus()[0]?.model ?? 'unknown',
    cores,
    pinning: pinned
      ? 'gateway on core 0; mock and load generator on core 1 (taskset)'
      : 'NOT PINNED (taskset unavailable or fewer than 2 cores): numbers are noisier',
  };
  log(`Tollgate benchmark — node ${meta.node}, ${meta.cpu}, ${meta.cores} cores; ${meta.pinning}`);
  log(`cells ${options.durationS} s (+${options.warmupS} s warm-up), connections ${options.connections.join(',')}, Tollgate LOG_LEVEL=${options.logLevel}`);

  const mock = await startMock(pinned ? loadCore : null);
  try {
    // The matrix's Tollgate and each scenario's are fresh ones started alike.
    const tollgateOptions: TollgateOptions = {
      core: pinned ? gatewayCore : null,
      openaiBaseUrl: mock.origin,
      logLevel: options.logLevel,
      dbDir: options.dbDir,
    };
    const skipped = (name: string) => options.skip.includes(name);
    const runs = skipped('matrix') ? [] : await measureMatrix(options, mock, tollgateOptions);
    const slow = await phase(options.slowStreams > 0 && !skipped('slow'), `${options.slowStreams} concurrent slow streams (a chunk every 200 ms)`, () =>
      runSlowStreams(tollgateOptions, options.slowStreams, log),
    );
    const soak = await phase(options.soakMinutes > 0 && !skipped('soak'), `Soak, ${options.soakMinutes} min`, () =>
      runSoak(tollgateOptions, options.soakMinutes, log),
    );
    const ledger = await phase(!skipped('ledger'), 'Ledger insert rate', () => runLedgerRate(options.ledgerRecords, log));

    const comparisons = compare(runs, options.connections);
    const results = { runs, comparisons, verdicts: guardVerdicts(comparisons, runs), slow, soak, ledger };
    log(`\n${formatReport(results)}`);
    mkdirSync(dirname(options.out), { recursive: true });
    writeFileSync(options.out, `${JSON.stringify({ meta, options, ...results }, null, 2)}\n`);
    log(`\nResults: ${options.out}`);
  } finally {
    await mock.process.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${(error as Error).stack ?? error}\n`);
    killAll();
    process.exit(1);
  },
);
