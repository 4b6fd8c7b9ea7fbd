/** Runs the real `tollgate` entry point as a child process, as an operator would. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { after } from 'node:test';
import { fileURLToPath } from 'node:url';

export const entry = fileURLToPath(new URL('../../src/main.js', import.meta.url));

/** Gateways still running: a test that failed before stopping its own must not keep the file's process (and CI) waiting. */
const running = new Set<ChildProcess>();
after(() => {
  for (const child of running) child.kill('SIGKILL');
});

export interface GatewayProcess {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  /** Waits (up to `timeoutMs`) until stdout matches `pattern`, then returns the match: the key banner is a write of its own, after the address line. */
  waitForStdout: (pattern: RegExp, timeoutMs?: number) => Promise<RegExpExecArray>;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
}

export async function spawnGateway(env: Record<string, string>, args: string[] = ['serve'], timeoutMs = 30_000): Promise<GatewayProcess> {
  const child = spawn(process.execPath, [entry, ...args], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk) => {
    out += chunk;
  });
  child.stderr!.on('data', (chunk) => {
    err += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start in time:\n${out}\n${err}`)), timeoutMs);
    const check = () => {
      const match = /Tollgate listening on (http:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        resolve(match[1]);
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code}:\n${out}\n${err}`));
    });
  });
  const waitForStdout = async (pattern: RegExp, waitMs = 15_000): Promise<RegExpExecArray> => {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const match = pattern.exec(out);
      if (match) return match;
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`stdout never matched ${pattern}:\n${out}\n${err}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  return { child, url, stdout: () => out, waitForStdout, exited };
}

export function runCli(args: string[], env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [entry, ...args], { env: { ...process.env, LOG_LEVEL: 'warn', ...env }, encoding: 'utf8', timeout: 30_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
