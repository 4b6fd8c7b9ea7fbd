/**
 * The three targets measured: the mock upstream itself (direct), the floor proxy, and Tollgate
 * (its real entry point, `--workers 1`, a fresh SQLite database, the `openai` vendor pointed at
 * the mock).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnProcess, type BenchProcess } from './processes.js';

/** Core of the gateway under test; the mock and the benchmark, which generates the load, share the other. */
export const gatewayCore = 0;
export const loadCore = 1;

const floorKey = 'floor-key';
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

/** A target under load. */
export interface Gateway {
  name: 'direct' | 'floor' | 'stack' | 'tollgate';
  /** The completions endpoint. */
  url: string;
  headers: Record<string, string>;
  /** The process to watch (CPU, memory); the mock's for `direct`. */
  process: BenchProcess;
  /** Spawn → listening, ms. */
  startupMs: number;
  stop(): Promise<void>;
}

/** The mock upstream, running until the benchmark ends. */
export interface Mock {
  process: BenchProcess;
  origin: string;
}

export async function startMock(core: number | null): Promise<Mock> {
  const mock = spawnProcess({ name: 'mock upstream', core, args: [here('./mock-upstream.js')], env: { PORT: '0' }, ipc: true });
  const { match } = await mock.waitFor(/mock listening on (http:\/\/\S+)/, 15_000);
  return { process: mock, origin: match[1] };
}

/** The mock called straight, the baseline for "latency added"; stopping it is the benchmark's job. */
export function directGateway(mock: Mock): Gateway {
  return { name: 'direct', url: `${mock.origin}/v1/completions`, headers: {}, process: mock.process, startupMs: 0, stop: async () => {} };
}

/**
 * The floor (`floor-proxy.ts`, on bare `node:http`) or the stack floor (`stack-floor.ts`, the same
 * work on Tollgate's HTTP stack, fastify; measured only when `--targets` names `stack`).
 */
export async function startFloor(core: number | null, mockOrigin: string, kind: 'floor' | 'stack' = 'floor'): Promise<Gateway> {
  const floor = spawnProcess({
    name: kind === 'floor' ? 'floor proxy' : 'stack floor',
    core,
    args: [here(kind === 'floor' ? './floor-proxy.js' : './stack-floor.js')],
    env: { PORT: '0', UPSTREAM_URL: mockOrigin, FLOOR_API_KEY: floorKey },
    ipc: true,
  });
  // Both print `… floor listening on URL`.
  const { match, afterMs } = await floor.waitFor(/floor listening on (http:\/\/\S+)/, 15_000);
  return { name: kind, url: `${match[1]}/v1/completions`, headers: { 'x-api-key': floorKey }, process: floor, startupMs: afterMs, stop: () => floor.stop() };
}

/** How to start one Tollgate. */
export interface TollgateOptions {
  core: number | null;
  /** Base URL of the `openai` vendor: the mock, maybe with a `/delay-MS` prefix. */
  openaiBaseUrl: string;
  /** LOG_LEVEL. */
  logLevel: string;
  /** Parent directory of its fresh database. */
  dbDir: string;
  /** Written as TOLLGATE_CONFIG when given. */
  config?: Record<string, unknown>;
}

export async function startTollgate(options: TollgateOptions): Promise<Gateway> {
  const directory = mkdtempSync(join(options.dbDir, 'tollgate-bench-'));
  const env: Record<string, string> = {
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: `sqlite:${join(directory, 'tollgate.db')}`,
    LOG_LEVEL: options.logLevel,
    OPENAI_API_KEY: 'sk-bench-mock',
    OPENAI_BASE_URL: options.openaiBaseUrl,
    TOLLGATE_CONFIG: '',
  };
  if (options.config) {
    env.TOLLGATE_CONFIG = join(directory, 'tollgate.json');
    writeFileSync(env.TOLLGATE_CONFIG, JSON.stringify(options.config));
  }
  const tollgate = spawnProcess({ name: 'tollgate', core: options.core, args: [here('../src/main.js'), 'serve', '--workers', '1'], env });
  const removeDirectory = () => rmSync(directory, { recursive: true, force: true });
  try {
    const { match, afterMs } = await tollgate.waitFor(/Tollgate listening on (http:\/\/\S+)/, 60_000);
    // A fresh database prints the default account's key once, alone on its line.
    const { match: keyMatch } = await tollgate.waitFor(/^\s*(tg_\S+)\s*$/m, 5_000);
    return {
      name: 'tollgate',
      url: `${match[1]}/v5/completions`,
      headers: { 'x-api-key': keyMatch[1] },
      process: tollgate,
      startupMs: afterMs,
      stop: async () => {
        await tollgate.stop(10_000);
        removeDirectory();
      },
    };
  } catch (error) {
    await tollgate.stop(1_000);
    removeDirectory();
    throw error;
  }
}

/** The request body: 20 tokens, non-stream or streamed with usage, the same bytes for every target. */
export function completionBody(stream: boolean, maxTokens = 20): string {
  const body = { model: 'openai/gpt-3.5-turbo-instruct', prompt: 'Say this is a benchmark of a gateway', max_tokens: maxTokens };
  return JSON.stringify(stream ? { ...body, stream: true, stream_options: { include_usage: true } } : body);
}

/** One request of each kind, checked, so a broken path fails loudly instead of benchmarking errors. */
export async function checkGateway(gateway: Gateway): Promise<void> {
  for (const stream of [false, true]) {
    const response = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...gateway.headers },
      body: completionBody(stream),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    const expected = stream
      ? text.includes('[DONE]') && text.includes('"usage"') && !text.includes('"error":{')
      : text.includes('"text_completion"') && text.includes('"usage"');
    if (response.status !== 200 || !expected) {
      throw new Error(`${gateway.name} ${stream ? 'stream' : 'non-stream'} check failed: ${response.status} ${text.slice(0, 500)}`);
    }
  }
}
