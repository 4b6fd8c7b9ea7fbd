/**
 * Redis and PostgreSQL servers that a test starts, stops and restarts itself (on their own
 * ports), to prove the gateway fails cleanly while they are away and recovers by itself.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what} did not come up in ${timeoutMs} ms`);
}

export interface PrivateServer {
  url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  destroy(): Promise<void>;
}

export function redisAvailable(): boolean {
  return spawnSync('redis-server', ['--version']).status === 0;
}

export async function startPrivateRedis(): Promise<PrivateServer> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const ping = () => spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'ping'], { encoding: 'utf8' }).stdout.trim() === 'PONG';
  const server: PrivateServer = {
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
      await waitFor(ping, 10_000, 'redis');
    },
    async stop() {
      if (!child) return;
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      child = null;
    },
    async destroy() {
      await server.stop();
    },
  };
  await server.start();
  return server;
}

function postgresBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).sort();
  return versions.length ? join(root, versions[versions.length - 1], 'bin') : null;
}

export function privatePostgresAvailable(): boolean {
  return postgresBin() !== null && spawnSync('id', ['postgres']).status === 0;
}

/** A throwaway PostgreSQL cluster run as the `postgres` user (initdb refuses root). */
export async function startPrivatePostgres(): Promise<PrivateServer> {
  const bin = postgresBin();
  if (!bin) throw new Error('no PostgreSQL binaries under /usr/lib/postgresql');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-pg-'));
  const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  chownSync(dir, uid, gid);
  const asPostgres = (args: string[]) => {
    const result = spawnSync('runuser', ['-u', 'postgres', '--', ...args], { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`${args[0]} failed: ${result.stderr}${result.stdout}`);
  };
  asPostgres([join(bin, 'initdb'), '-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres']);
  const server: PrivateServer = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async start() {
      asPostgres([
        join(bin, 'pg_ctl'),
        '-D',
        join(dir, 'data'),
        '-o',
        `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`,
        '-l',
        join(dir, 'log'),
        '-w',
        'start',
      ]);
    },
    async stop() {
      asPostgres([join(bin, 'pg_ctl'), '-D', join(dir, 'data'), '-m', 'immediate', '-w', 'stop']);
    },
    async destroy() {
      try {
        await server.stop();
      } catch {
        /* already stopped */
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}
