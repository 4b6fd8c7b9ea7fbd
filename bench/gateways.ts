/**
 * The three things measured: the mock upstream itself, the floor proxy, and Tollgate (real entry
 * point, `--workers 1`, fresh SQLite database, the `openai` vendor pointed at the mock).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnProcess, type BenchProcess } from './processes.js';

/** Core of the gateway under test; the mock, the load generator and the benchmark share the other. */
export const gatewayCore = 0;
export const loadCore = 1;

export const floorKey = 'floor-key';
export const openaiModel = 'openai/gpt-3.5-turbo-instruct';
export const localModel = 'local/tollgate-small';

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const tollgateEntry = fileURLToPath(new URL('../src/main.js', import.meta.url));

export interface Gateway {
  name: 'direct' | 'floor' | 'tollgate';
  /** The completions endpoint. */
  url: string;
  headers: Record<string, string>;
  /** The process to watch (CPU, memory); the mock's for `direct`. */
  process: BenchProcess;
  /** Spawn → listening, ms. */
  startupMs: number;
  stop(): Promise<void>;
}

export async function startMock(core: number | null): Promise<{ process: BenchProcess; origin: string }> {
  const mock = spawnProcess({ name: 'mock upstream', core, args: [here('./mock-upstream.js')], env: { PORT: '0' }, ipc: true });
  const { match } = await mock.waitFor(/mock listening on (http:\/\/\S+)/, 15_000);
  return { process: mock, origin: match[1] };
}

export function directGateway(mock: { process: BenchProcess; origin: string }): Gateway {
  return { name: 'direct', url: `${mock.origin}/v1/completions`, headers: {}, process: mock.process, startupMs: 0, stop: async () => {} };
}

/** `wrapper` and `nodeFlags` as for Tollgate (TollgateOptions). */
export async function startFloor(core: number | null, mockOrigin: string, wrapper?: string[], nodeFlags: string[] = []): Promise<Gateway> {
  const floor = spawnProcess({ name: 'floor proxy', core, args: [...nodeFlags, here('./floor-proxy.js')], env: { PORT: '0', UPSTREAM_URL: mockOrigin, FLOOR_API_KEY: floorKey }, ipc: true, wrapper });
  const { match, at } = await floor.waitFor(/floor listening on (http:\/\/\S+)/, wrapper ? 300_000 : 15_000);
  return { name: 'floor', url: `${match[1]}/v1/completions`, headers: { 'x-api-key': floorKey }, process: floor, startupMs: at - floor.spawnedAt, stop: () => floor.stop() };
}

export interface TollgateOptions {
  core: number | null;
  /** Base URL of the `openai` vendor (the mock, maybe with a `/delay-MS` prefix). */
  openaiBaseUrl: string;
  logLevel: string;
  /** Node flags before the entry point (`--cpu-prof …`). */
  nodeFlags?: string[];
  /** Tollgate's entry point (default this build's `dist/src/main.js`; another build's for `compare-builds`). */
  entry?: string;
  /** Extra environment (overrides the defaults above). */
  env?: Record<string, string>;
  /** Written as TOLLGATE_CONFIG when given. */
  config?: Record<string, unknown>;
  /** Parent directory of the fresh database (default the OS temp dir). */
  dbDir?: string;
  /** A program that runs node (`valgrind …`, see spawnProcess); start-up may then take minutes. */
  wrapper?: string[];
}

let defaultDbDir = tmpdir();
/** Where every Tollgate of this run keeps its database (`--db-dir`). */
export function setDefaultDbDir(directory: string): void {
  defaultDbDir = directory;
}

export async function startTollgate(options: TollgateOptions): Promise<Gateway> {
  const dir = mkdtempSync(join(options.dbDir ?? defaultDbDir, 'tollgate-bench-'));
  const env: Record<string, string> = {
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: `sqlite:${join(dir, 'tollgate.db')}`,
    LOG_LEVEL: options.logLevel,
    OPENAI_API_KEY: 'sk-bench-mock',
    OPENAI_BASE_URL: options.openaiBaseUrl,
    TOLLGATE_CONFIG: '',
    ...options.env,
  };
  if (options.config) {
    env.TOLLGATE_CONFIG = join(dir, 'tollgate.json');
    writeFileSync(env.TOLLGATE_CONFIG, JSON.stringify(options.config));
  }
  const tollgate = spawnProcess({ name: 'tollgate', core: options.core, args: [...(options.nodeFlags ?? []), options.entry ?? tollgateEntry, 'serve', '--workers', '1'], env, wrapper: options.wrapper });
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  try {
    const { match, at } = await tollgate.waitFor(/Tollgate listening on (http:\/\/\S+)/, options.wrapper ? 600_000 : 60_000);
    const { match: keyMatch } = await tollgate.waitFor(/^\s*(tg_\S+)\s*$/m, 5_000);
    return {
      name: 'tollgate',
      url: `${match[1]}/v5/completions`,
      headers: { 'x-api-key': keyMatch[1] },
      process: tollgate,
      startupMs: at - tollgate.spawnedAt,
      stop: async () => { await tollgate.stop(10_000); cleanup(); },
    };
  } catch (error) {
    await tollgate.stop(1_000);
    cleanup();
    throw error;
  }
}

/** The request bodies: 20 tokens, non-stream or streamed with usage (the same bytes for every target). */
export function completionBody(stream: boolean, model = openaiModel, maxTokens = 20): string {
  const body: Record<string, unknown> = { model, prompt: 'Say this is a benchmark of a gateway', max_tokens: maxTokens };
  if (stream) Object.assign(body, { stream: true, stream_options: { include_usage: true } });
  return JSON.stringify(body);
}

/** One request of each kind, checked, so a broken path fails loudly instead of benchmarking errors. */
export async function checkGateway(gateway: Gateway, model = openaiModel): Promise<void> {
  for (const stream of [false, true]) {
    const response = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...gateway.headers },
      body: completionBody(stream, gateway.name === 'direct' ? model.replace(/^openai\//, '') : model),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    const expected = stream ? text.includes('[DONE]') && text.includes('"usage"') && !text.includes('"error":{') : text.includes('"text_completion"') && text.includes('"usage"');
    if (response.status !== 200 || !expected) {
      throw new Error(`${gateway.name} ${stream ? 'stream' : 'non-stream'} check failed: ${response.status} ${text.slice(0, 500)}`);
    }
  }
}
