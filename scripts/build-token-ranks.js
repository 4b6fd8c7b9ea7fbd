// Writes the BPE rank tables gpt-tokenizer ships as JavaScript modules to dist/token-ranks/*.json,
// which src/tokenizer/bpe-ranks.ts reads with JSON.parse (its comment says why), and as the compact
// tables src/tokenizer/compact-bpe.ts counts with (*.bpe). Run by `npm run build`, after tsc.
import { createRequire } from 'node:module';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeCompactTable } from '../dist/src/tokenizer/compact-bpe.js';

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'dist', 'token-ranks');
mkdirSync(out, { recursive: true });
for (const name of ['cl100k_base', 'o200k_base']) {
  const ranks = require(`gpt-tokenizer/cjs/bpeRanks/${name}`).default;
  if (!Array.isArray(ranks) || ranks.length < 100_000) throw new Error(`gpt-tokenizer's ${name} ranks are not the array this script expects`);
  writeFileSync(join(out, `${name}.json`), JSON.stringify(ranks));
  writeFileSync(join(out, `${name}.bpe`), writeCompactTable(ranks));
}
