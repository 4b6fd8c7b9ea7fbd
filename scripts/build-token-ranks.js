// Writes the BPE rank tables gpt-tokenizer ships as JavaScript (one array literal of ~100k or
// ~200k entries) to dist/token-ranks/*.json, which the gateway loads with JSON.parse instead.
// Compiling the JavaScript table costs V8's parser tens of MiB of memory that stays with the
// process (README, "Benchmark and performance": cl100k took RSS +35 MiB that way, +25 as JSON);
// reading the same entries as JSON builds the strings directly. Run by `npm run build`.
import { createRequire } from 'node:module';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const root = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..');
const out = join(root, 'dist', 'token-ranks');
mkdirSync(out, { recursive: true });
for (const name of ['cl100k_base', 'o200k_base']) {
  const ranks = require(`gpt-tokenizer/cjs/bpeRanks/${name}`).default;
  if (!Array.isArray(ranks) || ranks.length < 100_000) throw new Error(`gpt-tokenizer's ${name} ranks are not the array this script expects`);
  writeFileSync(join(out, `${name}.json`), JSON.stringify(ranks));
}
