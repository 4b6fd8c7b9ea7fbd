/** `npm run bench`'s command line. */
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export const usage = `usage: npm run bench -- [options]
  --quick               16 connections only, 2 s cells, 0.5 min soak, 200 slow streams (~1.5 min)
  --duration S          seconds per cell and target (default 6; quick 2), split into --rounds
                        alternating slices
  --rounds N            alternating slices per cell and target (default 3; quick 2)
  --warmup S            warm-up seconds before each cell (default 1)
  --connections LIST    connection counts (default 1,16,64; quick 16)
  --soak-minutes N      soak length, 0 to skip (default 10; quick 0.5)
  --slow-streams N      concurrent slow streams, 0 to skip (default 1000; quick 200)
  --ledger-records N    SQLite ledger inserts (default 20000)
  --log-level LEVEL     Tollgate's LOG_LEVEL (default info, as in production)
  --skip LIST           phases to skip: matrix,slow,soak,ledger
  --targets LIST        matrix targets (default direct,floor,tollgate; add stack for the floor's
                        work on Tollgate's HTTP stack, fastify)
  --db-dir DIR          parent directory of Tollgate's fresh SQLite databases (default the OS temp dir)
  --out FILE            JSON results (default dist/bench-results/latest.json)`;

/** What one run measures and for how long. */
export interface BenchOptions {
  quick: boolean;
  /** Seconds per cell and target. */
  durationS: number;
  rounds: number;
  warmupS: number;
  connections: number[];
  soakMinutes: number;
  slowStreams: number;
  ledgerRecords: number;
  logLevel: string;
  skip: string[];
  targets: string[];
  dbDir: string;
  /** Where the JSON results go. */
  out: string;
}

const list = (text: string) =>
  text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);

/** Parses the command line; null when it asked for help. Throws on a bad option, naming it. */
export function parseBenchOptions(argv: string[]): BenchOptions | null {
  const text = { type: 'string' } as const;
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      quick: { type: 'boolean' },
      duration: text,
      rounds: text,
      warmup: text,
      connections: text,
      'soak-minutes': text,
      'slow-streams': text,
      'ledger-records': text,
      'log-level': text,
      skip: text,
      targets: text,
      'db-dir': text,
      out: text,
    },
  });
  if (values.help) return null;
  const quick = values.quick ?? false;
  const number = (raw: string | undefined, name: string, fallback: number, min: number, max: number) => {
    if (raw === undefined) return fallback;
    const parsed = Number(raw);
    if (!Number.isFinite(parsed) || parsed < min || parsed > max) throw new Error(`--${name} must be a number from ${min} to ${max}`);
    return parsed;
  };
  const targets = list(values.targets ?? 'direct,floor,tollgate');
  const unknownTarget = targets.find((target) => !['direct', 'floor', 'stack', 'tollgate'].includes(target));
  if (unknownTarget) throw new Error(`--targets takes direct, floor, stack and tollgate, not '${unknownTarget}'`);
  const connections = list(values.connections ?? (quick ? '16' : '1,16,64')).map(Number);
  if (connections.some((count) => !Number.isInteger(count) || count < 1 || count > 1024)) throw new Error('--connections takes integers from 1 to 1024');
  return {
    quick,
    durationS: number(values.duration, 'duration', quick ? 2 : 6, 0.5, 600),
    rounds: Math.round(number(values.rounds, 'rounds', quick ? 2 : 3, 1, 20)),
    warmupS: number(values.warmup, 'warmup', 1, 0, 60),
    connections,
    soakMinutes: number(values['soak-minutes'], 'soak-minutes', quick ? 0.5 : 10, 0, 240),
    slowStreams: Math.round(number(values['slow-streams'], 'slow-streams', quick ? 200 : 1000, 0, 10_000)),
    ledgerRecords: Math.round(number(values['ledger-records'], 'ledger-records', 20_000, 1, 1_000_000)),
    logLevel: values['log-level'] ?? 'info',
    skip: list(values.skip ?? ''),
    targets,
    dbDir: values['db-dir'] ?? tmpdir(),
    out: resolve(values.out ?? fileURLToPath(new URL('../bench-results/latest.json', import.meta.url))),
  };
}
