/**
 * `--profile`: Tollgate under closed-loop load with `node --cpu-prof`, then the profile summarised
 * (self time by package, file and function). The profile is written when the gateway exits.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { completionBody, gatewayCore, startTollgate, checkGateway } from './gateways.js';
import type { LoadClient } from './load-client.js';
import type { CannonResult } from './load-protocol.js';
import { cpuTimeMs } from './processes.js';
import { formatSummary, summariseProfile, type ProfileSummary } from './summarise-profile.js';

export interface ProfileOptions {
  directory: string;
  mode: 'json' | 'stream';
  connections: number;
  durationS: number;
  logLevel: string;
  log: (line: string) => void;
}

export interface ProfileRun {
  file: string;
  requestsPerSecond: number;
  cpuMicrosPerRequest: number;
  summary: ProfileSummary;
}

export async function runProfile(load: LoadClient, mockOrigin: string, options: ProfileOptions): Promise<ProfileRun> {
  mkdirSync(options.directory, { recursive: true });
  const before = new Set(readdirSync(options.directory));
  const tollgate = await startTollgate({
    core: gatewayCore, openaiBaseUrl: mockOrigin, logLevel: options.logLevel,
    nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${options.directory}`],
  });
  let result: CannonResult;
  let cpuMs = 0;
  try {
    await checkGateway(tollgate);
    let cpuStart = 0;
    result = await load.run<CannonResult>({
      kind: 'cannon', target: { url: tollgate.url, headers: tollgate.headers }, bodies: [completionBody(options.mode === 'stream')],
      connections: options.connections, durationS: options.durationS, warmupS: 1, recordLatency: false,
    }, (options.durationS + 60) * 1000, { onMeasuring: () => { cpuStart = cpuTimeMs(tollgate.process.pid); } });
    cpuMs = cpuTimeMs(tollgate.process.pid) - cpuStart;
  } finally {
    await tollgate.stop();
  }
  const written = readdirSync(options.directory)
    .filter((name) => name.endsWith('.cpuprofile') && !before.has(name))
    .map((name) => join(options.directory, name))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  if (written.length === 0) throw new Error(`no .cpuprofile was written to ${options.directory}`);
  const summary = summariseProfile(JSON.parse(readFileSync(written[0], 'utf8')), 30);
  const text = formatSummary(summary);
  writeFileSync(`${written[0]}.summary.txt`, `${text}\n`);
  const cpuMicrosPerRequest = (cpuMs * 1000) / result.ok;
  options.log(`  profiled ${options.mode} c=${options.connections}: ${result.requestsPerSecond.toFixed(0)} req/s, ${cpuMicrosPerRequest.toFixed(0)} µs CPU/request (with the profiler's overhead)`);
  options.log(`  profile: ${written[0]}\n\n${text}`);
  return { file: written[0], requestsPerSecond: result.requestsPerSecond, cpuMicrosPerRequest, summary };
}
