/**
 * `npm run bench`: what Tollgate adds over a bare pass-through proxy (the floor) and over calling
 * the upstream directly, all on 127.0.0.1 against a fast mock OpenAI upstream. The gateway under
 * test runs alone on core 0; the mock, the load generator and this process share core 1.
 * Results: a table on stdout and JSON in dist/bench-results/ (see --help).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runLedgerRate, runSlowStreams, runSoak, runTokens, type SlowStreamsResult, type SoakResult, type TokensReport } from './extras.js';
import { checkGateway, directGateway, gatewayCore, loadCore, setDefaultDbDir, startFloor, startMock, startTollgate, type Gateway } from './gateways.js';
import type { LedgerRateResult } from './ledger-rate.js';
import { startLoadClient } from './load-client.js';
import { runInterleaved, runTarget, type TargetRun } from './matrix.js';
import { guardChildren, killAll, pinSelf, tasksetAvailable } from './processes.js';
import { compare, formatReport, verdicts } from './report.js';

const usage = `usage: npm run bench -- [options]
  --quick               16 connections only, 2 s runs, 0.5 min soak, 200 slow streams (~2 min)
  --duration S          seconds per measured cell (default 6; quick 2); the floor and Tollgate
                        split it into --rounds alternating slices each
  --rounds N            alternating slices per cell and target (default 3; quick 2)
  --warmup S            warm-up seconds before each run (default 1)
  --connections LIST    connection counts (default 1,16,64; quick 16)
  --soak-minutes N      soak length, 0 to skip (default 10; quick 0.5)
  --slow-streams N      concurrent slow streams, 0 to skip (default 1000; quick 200)
  --tokens-seconds S    seconds per local-model throughput run (default 10; quick 3)
  --ledger-records N    ledger inserts (default 20000)
  --log-level LEVEL     Tollgate LOG_LEVEL (default info, as in production)
  --skip LIST           phases to skip: matrix,slow,soak,ledger,tokens
  --targets LIST        matrix targets (default direct,floor,tollgate)
  --db-dir DIR          parent directory of Tollgate's fresh SQLite databases (default the OS temp dir)
  --out FILE            JSON results (default dist/bench-results/latest.json)`;

interface Options {
  quick: boolean;
  durationS: number;
  rounds: number;
  warmupS: number;
  connections: number[];
  soakMinutes: number;
  slowStreams: number;
  tokensSeconds: number;
  ledgerRecords: number;
  logLevel: string;
  skip: Set<string>;
  targets: Set<string>;
  dbDir: string | null;
  out: string;
}

function parseArgs(argv: string[]): Options {
  const values = new Map<string, string>();
  const flags = new Set<string>();
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index];
    if (arg === '--help' || arg === '-h') { process.stdout.write(`${usage}\n`); process.exit(0); }
    if (!arg.startsWith('--')) throw new Error(`unexpected argument '${arg}'\n${usage}`);
    const [name, inline] = arg.slice(2).split('=', 2);
    if (name === 'quick') { flags.add(name); continue; }
    const value = inline ?? argv[++index];
    if (value === undefined) throw new Error(`--${name} needs a value`);
    values.set(name, value);
  }
  const quick = flags.has('quick');
  const number = (name: string, fallback: number, min: number, max: number) => {
    const raw = values.get(name);
    if (raw === undefined) return fallback;
    const parsed = Number(raw);
    if (!Number.isFinite(parsed) || parsed < min || parsed > max) throw new Error(`--${name} must be a number from ${min} to ${max}`);
    return parsed;
  };
  const known = ['duration', 'rounds', 'warmup', 'connections', 'soak-minutes', 'slow-streams', 'tokens-seconds', 'ledger-records', 'log-level', 'skip', 'targets', 'db-dir', 'out'];
  for (const name of values.keys()) if (!known.includes(name)) throw new Error(`unknown option --${name}\n${usage}`);
  const connections = (values.get('connections') ?? (quick ? '16' : '1,16,64')).split(',').map((text) => Number(text.trim()));
  if (connections.some((count) => !Number.isInteger(count) || count < 1 || count > 1024)) throw new Error('--connections: integers from 1 to 1024');
  return {
    quick,
    durationS: number('duration', quick ? 2 : 6, 0.5, 600),
    rounds: Math.round(number('rounds', quick ? 2 : 3, 1, 20)),
    warmupS: number('warmup', 1, 0, 60),
    connections,
    soakMinutes: number('soak-minutes', quick ? 0.5 : 10, 0, 240),
    slowStreams: Math.round(number('slow-streams', quick ? 200 : 1000, 0, 10_000)),
    tokensSeconds: number('tokens-seconds', quick ? 3 : 10, 0.5, 600),
    ledgerRecords: Math.round(number('ledger-records', 20_000, 1, 1_000_000)),
    logLevel: values.get('log-level') ?? 'info',
    skip: new Set((values.get('skip') ?? '').split(',').map((text) => text.trim()).filter(Boolean)),
    targets: new Set((values.get('targets') ?? 'direct,floor,tollgate').split(',').map((text) => text.trim()).filter(Boolean)),
    dbDir: values.get('db-dir') ?? null,
    out: resolve(values.get('out') ?? fileURLToPath(new URL('../bench-results/latest.json', import.meta.url))),
  };
}

/** Upper bound on the whole run; past it everything is killed. */
function budgetSeconds(options: Options): number {
  const cell = options.durationS + options.warmupS + options.rounds * 2 + 10;
  const matrix = options.skip.has('matrix') ? 0 : 3 * (2 * options.connections.length + 1) * cell + 120;
  return matrix + 180 + options.soakMinutes * 60 + 60 + 4 * options.tokensSeconds + 300 + 120;
}

const log = (line: string) => process.stdout.write(`${line}\n`);

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  guardChildren();
  if (options.dbDir) setDefaultDbDir(options.dbDir);
  const budget = budgetSeconds(options);
  setTimeout(() => {
    process.stderr.write(`bench: exceeded its time budget of ${budget} s, stopping\n`);
    killAll();
    process.exit(2);
  }, budget * 1000).unref();
  const cores = availableParallelism();
  const pinned = tasksetAvailable && cores >= 2 && pinSelf(loadCore);
  const gatewayPin = pinned ? gatewayCore : null;
  const loadPin = pinned ? loadCore : null;
  const meta = {
    startedAt: new Date().toISOString(),
    node: process.version,
    cpu: cpus()[0]?.model ?? 'unknown',
    cores,
    pinned,
    pinning: pinned ? 'gateway on core 0; mock, load generator and benchmark on core 1 (taskset)' : 'NOT PINNED (taskset unavailable or fewer than 2 cores): numbers are noisier',
    logLevel: options.logLevel,
    dbDir: options.dbDir ?? 'OS temp dir',
  };
  log(`Tollgate benchmark — node ${meta.node}, ${meta.cpu}, ${meta.cores} cores; ${meta.pinning}`);
  log(`runs ${options.durationS} s (+${options.warmupS} s warm-up), connections ${options.connections.join(',')}, Tollgate LOG_LEVEL=${options.logLevel}`);

  const mock = await startMock(loadPin);
  const load = await startLoadClient(loadPin);
  try {
    const runs: TargetRun[] = [];
    const matrixOptions = { connections: options.connections, durationS: options.durationS, warmupS: options.warmupS, ttfbConnections: 16, rounds: options.rounds, log };
    if (!options.skip.has('matrix')) {
      if (options.targets.has('direct')) {
        log('\ndirect (mock upstream alone)');
        runs.push(await runTarget(load, directGateway(mock), matrixOptions));
      }
      // The floor and Tollgate run side by side and are measured in alternating slices (runInterleaved).
      const starters: [string, () => Promise<Gateway>][] = [
        ['floor', () => startFloor(gatewayPin, mock.origin)],
        ['tollgate', () => startTollgate({ core: gatewayPin, openaiBaseUrl: mock.origin, logLevel: options.logLevel })],
      ];
      const gateways: Gateway[] = [];
      try {
        for (const [name, start] of starters) {
          if (!options.targets.has(name)) continue;
          const gateway = await start();
          gateways.push(gateway);
          await checkGateway(gateway);
        }
        if (gateways.length > 0) {
          log(`\n${gateways.map((gateway) => gateway.name).join(' and ')}, interleaved: ${options.rounds} slices of ${(options.durationS / options.rounds).toFixed(1)} s per cell and target, median slice reported`);
          runs.push(...await runInterleaved(load, gateways, matrixOptions));
        }
      } finally {
        for (const gateway of gateways) await gateway.stop();
      }
    }
    let slow: SlowStreamsResult | null = null;
    let soak: SoakResult | null = null;
    let ledger: LedgerRateResult | null = null;
    let tokens: TokensReport | null = null;
    if (options.slowStreams > 0 && !options.skip.has('slow')) {
      log(`\n${options.slowStreams} concurrent slow streams (a chunk every 200 ms)`);
      slow = await runSlowStreams(load, mock.origin, options.slowStreams, options.logLevel, log);
    }
    if (options.soakMinutes > 0 && !options.skip.has('soak')) {
      log(`\nSoak, ${options.soakMinutes} min`);
      soak = await runSoak(load, mock.origin, options.soakMinutes, options.logLevel, log);
    }
    if (!options.skip.has('ledger')) {
      log('\nLedger insert rate');
      ledger = await runLedgerRate(options.ledgerRecords, log);
    }
    if (!options.skip.has('tokens')) {
      log('\nLocal model throughput');
      tokens = await runTokens(load, mock.origin, options.tokensSeconds, options.logLevel, log);
    }
    const report = compare(runs, options.connections);
    report.verdicts = verdicts(report, runs, { slow, soak });
    log(`\n${formatReport({ runs, report, slow, soak, ledger, tokens })}`);
    mkdirSync(dirname(options.out), { recursive: true });
    const options_ = { ...options, skip: [...options.skip] };
    writeFileSync(options.out, `${JSON.stringify({ meta, options: options_, runs, report, slow, soak, ledger, tokens }, null, 2)}\n`);
    log(`\nResults: ${options.out}`);
  } finally {
    await load.stop();
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
