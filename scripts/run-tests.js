// Runs every compiled test file with Node's built-in runner. Files are listed explicitly so the
// same command works on Node 20 (directory arguments) and Node 22 (glob arguments).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const dir = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', 'dist', 'test');
const only = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((name) => name.endsWith('.test.js'))
  .filter((name) => only.length === 0 || only.some((part) => name.includes(part)))
  .sort()
  .map((name) => join(dir, name));
const result = spawnSync(process.execPath, ['--test', '--test-concurrency=2', ...files], { stdio: 'inherit' });
process.exit(result.status ?? 1);
