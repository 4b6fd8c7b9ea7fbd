/** The package's own version, from its package.json: `tollgate --version` and the OpenAPI document. */
import { readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

let version: string | null = null;

/** The `version` of this package's package.json, read once. */
export function packageVersion(): string {
  if (version !== null) return version;
  const here = dirname(fileURLToPath(import.meta.url));
  // Compiled: <root>/dist/src/config; from source (tsx and the like): <root>/src/config.
  const packageRoot = basename(resolve(here, '..', '..')) === 'dist' ? resolve(here, '..', '..', '..') : resolve(here, '..', '..');
  const manifest: { version?: unknown } = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8'));
  version = typeof manifest.version === 'string' ? manifest.version : '0.0.0';
  return version;
}
