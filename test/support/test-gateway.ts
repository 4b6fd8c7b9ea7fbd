/** Starts a real gateway (real HTTP, real SQLite in a temp dir) for end-to-end tests. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/observability/logger.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';

export interface TestGateway {
  url: string;
  key: string;
  accountId: string;
  server: RunningServer;
  /** The gateway's DATABASE_URL (a second process, such as the CLI, can open it). */
  databaseUrl: string;
  /** Every log line the gateway wrote, parsed. */
  logs: Record<string, unknown>[];
  rawLogs: string[];
  stop(): Promise<void>;
}

export async function startTestGateway(env: Record<string, string> = {}): Promise<TestGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-test-'));
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: `sqlite:${join(dir, 'tollgate.db')}`, LOG_LEVEL: 'info', ...env });
  const rawLogs: string[] = [];
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n')) {
        if (!line) continue;
        rawLogs.push(line);
        try {
          logs.push(JSON.parse(line));
        } catch {
          /* not JSON: kept in rawLogs */
        }
      }
      callback();
    },
  });
  const logger = createLogger(config.logLevel, sink);
  const server = await startServer(config, { announce: false, logger });
  if (!server.bootstrapped) throw new Error('expected a fresh database');
  return {
    url: server.url,
    key: server.bootstrapped.key,
    accountId: server.bootstrapped.accountId,
    server,
    databaseUrl: config.databaseUrl,
    logs,
    rawLogs,
    async stop() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface JsonResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** POST JSON (or any body) with the gateway's key unless headers override it; `timeoutMs` fails the call (AbortError) instead of letting a hung response hang the test. */
export async function post(
  gateway: TestGateway,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
  options: { timeoutMs?: number } = {},
): Promise<JsonResponse> {
  const response = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': gateway.key, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: options.timeoutMs ? AbortSignal.timeout(options.timeoutMs) : undefined,
  });
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* SSE or plain text */
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

export async function get(gateway: TestGateway, path: string, headers: Record<string, string> = {}): Promise<JsonResponse> {
  const response = await fetch(`${gateway.url}${path}`, { headers: { 'x-api-key': gateway.key, ...headers } });
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/** Parses an SSE body into its events (data lines joined), comments dropped. */
export function parseSse(text: string): { event: string | null; data: string }[] {
  const events: { event: string | null; data: string }[] = [];
  for (const block of text.split('\n\n')) {
    if (!block.trim()) continue;
    let event: string | null = null;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (event !== null || data.length) events.push({ event, data: data.join('\n') });
  }
  return events;
}
