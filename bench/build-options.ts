/** What the tools that weigh one Tollgate build against another (compare-builds, count-instructions) read from their command line. */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/** `K=V,K2=V2` → an environment for one side. */
export function parseEnv(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of text.split(',').filter(Boolean)) {
    const equals = pair.indexOf('=');
    if (equals <= 0) throw new Error(`not K=V: ${pair}`);
    env[pair.slice(0, equals)] = pair.slice(equals + 1);
  }
  return env;
}

/** A built `dist` directory's entry point, checked to exist. */
export function entryOf(dist: string): string {
  const entry = resolve(dist, 'src/main.js');
  if (!existsSync(entry)) throw new Error(`${entry} does not exist: give a built dist directory`);
  return entry;
}
