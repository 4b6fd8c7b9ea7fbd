/**
 * Instructions per request under callgrind, for changes too small for a noisy machine's timings.
 * Valgrind counts the instructions the target executes (all its threads: JIT, GC, SQLite's), not
 * seconds, so the count for the same build and load barely moves whatever else the machine does:
 * runs of one build agree within ~1.5% where timed slices differ by 10%. Instructions are not
 * time (a cache miss costs no instruction), so a change this shows should still be confirmed by
 * `compare-builds` or a full run; what it settles quickly is whether a change removes work.
 *
 *   node dist/bench/count-instructions.js [--baseline DIST] [--candidate DIST] [--mode stream|json]
 *        [--requests 3000] [--warmup 6000] [--connections 1] [--no-floor] [--env K=V,…]
 *        [--baseline-env K=V,…] [--breakdown] [--drip-ms 2] [--keep DIR]
 *
 * Each target (the floor, the baseline when given, the candidate: this build unless named) runs
 * alone under `valgrind --tool=callgrind` with instrumentation off, takes `--warmup` requests (so
 * the JIT has settled), then counts `--requests` requests from a closed loop of `--connections`.
 * One connection keeps the gateway's batching (ledger commits, writes) the same from run to run.
 * V8's code flushing is off in the counted processes (both sides alike): under valgrind, ~50×
 * slower, V8 threw away and recompiled functions it keeps when run natively, which added 50–200k
 * instructions a request of compiler work that changed from run to run; without it, two runs of
 * the floor agreed within 0.2%.
 * `--breakdown` adds where the instructions went (JSON, strings, GC, SQLite, JIT code, …).
 * `--keep DIR` copies each target's dump there (`callgrind_annotate DIR/candidate.callgrind`).
 * `--drip-ms N` has the mock send a stream's chunks N ms apart, as a model does, so each arrives
 * in a read of its own (by default the mock writes a whole stream at once: one read). That count
 * is only indicative: how reads coalesce and when GC runs then depend on timing under valgrind
 * (two runs of near-identical builds differed by ~7%, at 16 connections with 20 ms apart).
 * Verdicts use the count without V8's optimising compilers: what they do in the counted stretch
 * depends on when V8's background threads got to run (10–33k instructions a request for the same
 * build); the rest of the count of one build moved by at most ~1.5% over five runs.
 * Needs valgrind (Debian's package); each target takes about a minute.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Agent, request } from 'undici';
import { checkGateway, completionBody, gatewayCore, loadCore, startFloor, startMock, startTollgate, type Gateway } from './gateways.js';
import { entryOf, parseEnv } from './build-options.js';
import { guardChildren, killAll, pinSelf } from './processes.js';

interface Options {
  baseline: string | null;
  candidate: string | null;
  mode: 'json' | 'stream';
  requests: number;
  warmup: number;
  connections: number;
  floor: boolean;
  breakdown: boolean;
  dripMs: number;
  env: Record<string, string>;
  baselineEnv: Record<string, string>;
  keep: string | null;
}

function parseArgs(argv: string[]): Options {
  const options: Options = { baseline: null, candidate: null, mode: 'stream', requests: 3000, warmup: 6000, connections: 1, floor: true, breakdown: false, dripMs: 0, env: {}, baselineEnv: {}, keep: null };
  for (let index = 0; index < argv.length; index++) {
    const value = () => {
      const next = argv[++index];
      if (next === undefined) throw new Error(`${argv[index - 1]} needs a value`);
      return next;
    };
    const count = (min: number, max: number) => Math.max(min, Math.min(max, Math.floor(Number(value())) || min));
    switch (argv[index]) {
      case '--baseline': options.baseline = resolve(value()); break;
      case '--candidate': options.candidate = resolve(value()); break;
      case '--mode': options.mode = value() === 'json' ? 'json' : 'stream'; break;
      case '--requests': options.requests = count(100, 100_000); break;
      case '--warmup': options.warmup = count(0, 100_000); break;
      case '--connections': options.connections = count(1, 64); break;
      case '--no-floor': options.floor = false; break;
      case '--breakdown': options.breakdown = true; break;
      case '--drip-ms': options.dripMs = count(0, 1000); break;
      case '--env': options.env = parseEnv(value()); break;
      case '--baseline-env': options.baselineEnv = parseEnv(value()); break;
      case '--keep': options.keep = resolve(value()); break;
      default: throw new Error(`unknown option ${argv[index]} (see the comment at the top of bench/count-instructions.ts)`);
    }
  }
  return options;
}

/** Where the instructions go: the first pattern a function's name matches (callgrind_annotate's names). */
const categories: [string, RegExp][] = [
  ['JSON.parse', /JsonParser|Builtin_JsonParse|InternalStringToDouble|Strtod/],
  ['JSON.stringify', /JsonStringif/],
  ['string table', /StringTable|Internalize|ComputeAndSetRawHash/],
  ['object shapes', /Transition|LookupIterator|Map::|MigrateToMap|FieldType/],
  ['strings (flatten, UTF-8)', /WriteToFlat|Utf8|CopyChars|StringAdd|NewRawOneByteString|ConsString|SlowFlatten|StringBuilder|SeqString/],
  ['SQLite', /better_sqlite3\.node/],
  ['GC', /Scavenger|Heap::|MarkCompact|Marking|Sweeper|heap::|Evacuat|MemoryChunk|PagedSpace|NewSpace|MinorMark|IncrementalMark|cppgc|RememberedSet|SlotSet/],
  ['JIT compilers', /compiler::|maglev|Maglev|turboshaft/],
  ['JIT code', /^\?\?\?:0x/],
  ['V8 builtins', /Builtins_/],
  ['allocation (V8)', /Factory|AllocateRaw/],
  ['libc (malloc, memcpy)', /libc\.so|libm\.so/],
  ['node, libuv, llhttp', /node::|uv_|llhttp/],
];

function breakdownOf(file: string, requests: number): Map<string, number> {
  const result = spawnSync('callgrind_annotate', ['--threshold=100', file], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const totals = new Map<string, number>();
  for (const line of (result.stdout ?? '').split('\n')) {
    const match = /^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$/.exec(line);
    if (!match || match[2].includes('PROGRAM TOTALS')) continue;
    const count = Number(match[1].replaceAll(',', ''));
    const name = match[2];
    const category = categories.find(([, pattern]) => pattern.test(name))?.[0] ?? 'other';
    totals.set(category, (totals.get(category) ?? 0) + count / requests / 1000);
  }
  return totals;
}

/**
 * A closed loop of `connections` senders, `count` requests in all; returns how many failed. The
 * warm-up and the counted stretch share `agent`, so its connections: a new connection at the
 * start of the count made V8 deoptimise and recompile code specialised to the warm-up's
 * connection objects, ~500M instructions of compiling that had nothing to do with the change.
 */
async function send(gateway: Gateway, agent: Agent, body: string, stream: boolean, count: number, connections: number): Promise<number> {
  let started = 0;
  let failed = 0;
  const headers = { 'content-type': 'application/json', ...gateway.headers };
  const sender = async () => {
    while (started < count) {
      started++;
      const response = await request(gateway.url, { method: 'POST', headers, body, dispatcher: agent, headersTimeout: 120_000, bodyTimeout: 120_000 });
      const text = await response.body.text();
      if (response.statusCode !== 200 || (stream && !text.includes('[DONE]'))) failed++;
    }
  };
  await Promise.all(Array.from({ length: connections }, sender));
  return failed;
}

interface Counted {
  label: string;
  /** Thousands of instructions a request, and the same without the optimising compilers. */
  kilo: number;
  steady: number;
  breakdown: Map<string, number>;
}

async function count(label: string, options: Options, start: (wrapper: string[]) => Promise<Gateway>, controlEnv: NodeJS.ProcessEnv): Promise<Counted> {
  const directory = mkdtempSync(join(tmpdir(), 'tollgate-callgrind-'));
  const prefix = join(directory, 'vgdb');
  const wrapper = ['valgrind', '--tool=callgrind', '--instr-atstart=no', '--dump-instr=no', '--smc-check=all-non-file', `--vgdb-prefix=${prefix}`, `--callgrind-out-file=${join(directory, 'callgrind.out.%p')}`];
  const control = (...args: string[]) => {
    // vgdb names its pipes after HOST; callgrind_control must see the target's.
    const result = spawnSync('callgrind_control', [`--vgdb-prefix=${prefix}`, ...args], { encoding: 'utf8', env: controlEnv, timeout: 300_000 });
    if (result.status !== 0 || /error|cannot|No active/i.test(`${result.stdout}${result.stderr}`)) throw new Error(`callgrind_control ${args.join(' ')} failed: ${result.stdout}${result.stderr}`);
  };
  const gateway = await start(wrapper);
  const agent = new Agent({ connections: options.connections });
  try {
    await checkGateway(gateway);
    const body = completionBody(options.mode === 'stream');
    const stream = options.mode === 'stream';
    let failed = await send(gateway, agent, body, stream, options.warmup, options.connections);
    // Valgrind runs one thread at a time: optimising compiles queued during the warm-up run on
    // V8's background threads only when the main thread waits. Let them finish before counting.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    control('--instr=on', String(gateway.process.pid));
    failed += await send(gateway, agent, body, stream, options.requests, options.connections);
    control('--dump', String(gateway.process.pid));
    if (failed > 0) throw new Error(`${label}: ${failed} requests failed`);
  } finally {
    await agent.close();
    await gateway.stop();
  }
  // The dump of the measured stretch is the file with the part suffix (.1); the exit writes none
  // worth reading (instrumentation was on only for the stretch, but stop adds shutdown work).
  const dump = readdirSync(directory).filter((name) => /^callgrind\.out\.\d+\.1$/.test(name)).map((name) => join(directory, name))[0];
  if (!dump) throw new Error(`${label}: callgrind wrote no dump in ${directory}`);
  const totals = /^(?:summary|totals): (\d+)/m.exec(readFileSync(dump, 'utf8'));
  if (!totals) throw new Error(`${label}: no totals in ${dump}`);
  const kilo = Number(totals[1]) / options.requests / 1000;
  const breakdown = breakdownOf(dump, options.requests);
  if (options.keep) {
    mkdirSync(options.keep, { recursive: true });
    copyFileSync(dump, join(options.keep, `${label}.callgrind`));
  }
  rmSync(directory, { recursive: true, force: true });
  return { label, kilo, steady: kilo - (breakdown.get('JIT compilers') ?? 0), breakdown };
}

function describe(counted: Counted): string {
  return `${counted.steady.toFixed(1)} kIr/request without compiling (${counted.kilo.toFixed(1)} in all)`;
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  if (spawnSync('valgrind', ['--version'], { stdio: 'ignore' }).status !== 0) throw new Error('valgrind is not installed (Debian: apt-get install valgrind)');
  guardChildren();
  pinSelf(loadCore);
  const mock = await startMock(loadCore);
  const upstream = options.dripMs > 0 ? `${mock.origin}/delay-${options.dripMs}` : mock.origin;
  const tollgateEnv = { ...process.env, HOST: '127.0.0.1' };
  const nodeFlags = ['--no-flush-bytecode', '--no-flush-baseline-code'];
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const drip = options.dripMs > 0 ? `, chunks ${options.dripMs} ms apart` : '';
  log(`count-instructions: ${options.mode}${drip}, ${options.connections} connection(s), ${options.warmup} warm-up + ${options.requests} counted requests per target, under callgrind`);
  const results: Counted[] = [];
  try {
    if (options.floor) {
      results.push(await count('floor', options, (wrapper) => startFloor(gatewayCore, upstream, wrapper, nodeFlags), process.env));
      log(`  floor      ${describe(results.at(-1)!)}`);
    }
    const tollgate = (label: string, entry: string | undefined, env: Record<string, string>) =>
      count(label, options, (wrapper) => startTollgate({ core: gatewayCore, openaiBaseUrl: upstream, logLevel: 'warn', entry, env, wrapper, nodeFlags }), tollgateEnv);
    const floor = results.find((result) => result.label === 'floor');
    const ratio = (counted: Counted) => (floor ? `  (${(counted.steady / floor.steady).toFixed(2)}× floor)` : '');
    let baseline: Counted | null = null;
    if (options.baseline) {
      baseline = await tollgate('baseline', entryOf(options.baseline), options.baselineEnv);
      results.push(baseline);
      log(`  baseline   ${describe(baseline)}${ratio(baseline)}`);
    }
    const candidate = await tollgate('candidate', options.candidate ? entryOf(options.candidate) : undefined, options.env);
    results.push(candidate);
    const change = baseline ? `  ${(((candidate.steady - baseline.steady) / baseline.steady) * 100).toFixed(1)}% vs baseline` : '';
    log(`  candidate  ${describe(candidate)}${ratio(candidate)}${change}`);
    if (options.breakdown) {
      log(`\nwhere the instructions go, kIr/request: ${results.map((result) => result.label).join(' / ')}`);
      const names = [...categories.map(([name]) => name), 'other'];
      for (const name of names) log(`  ${name.padEnd(26)} ${results.map((result) => (result.breakdown.get(name) ?? 0).toFixed(1).padStart(8)).join(' ')}`);
    }
  } finally {
    await mock.process.stop();
    killAll();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`count-instructions: ${(error as Error).stack ?? String(error)}\n`);
  killAll();
  process.exit(1);
});
