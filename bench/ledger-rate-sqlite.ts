/**
 * The SQLite ledger's insert rate, measured on the storage directly: N usage records, one awaited
 * `recordUsage` after another, into a fresh database. `npm run bench` runs it as a child pinned
 * like the gateway; it prints one JSON line (LedgerRateResult).
 *
 *   node dist/bench/ledger-rate-sqlite.js [N]
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStorage } from '../src/storage/create-storage.js';
import type { UsageRecord } from '../src/storage/types.js';
import { sampleUsageRecord } from './sample-usage-record.js';
import type { LedgerRateResult } from './ledger-rate.js';
import { summarise } from './stats.js';

async function main(): Promise<void> {
  const count = Math.min(Math.max(Number(process.argv[2] ?? 20_000) || 20_000, 1), 1_000_000);
  const directory = mkdtempSync(join(tmpdir(), 'tollgate-ledger-bench-'));
  const storage = await createStorage(`sqlite:${join(directory, 'ledger.db')}`);
  try {
    await storage.migrate();
    const account = await storage.createAccount('bench');
    const keyId = 'key_bench';
    await storage.createKey({ id: keyId, accountId: account.id, name: 'bench', prefix: 'tg_bench', secretHash: '0'.repeat(64) });
    // Random ids land all over the request-id index: the worst case. The gateway's own ids begin
    // with their time and land next to each other.
    const record = (index: number): UsageRecord => sampleUsageRecord(`cmpl-${randomBytes(18).toString('base64url')}`, account.id, keyId, index % 2 === 0);
    const latencies: number[] = [];
    const started = performance.now();
    for (let index = 0; index < count; index++) {
      const before = performance.now();
      if (!(await storage.recordUsage(record(index)))) throw new Error(`record ${index} was not inserted`);
      latencies.push(performance.now() - before);
    }
    const seconds = (performance.now() - started) / 1000;
    const summary = summarise(latencies);
    const result: LedgerRateResult = { records: count, seconds, perSecond: count / seconds, p50Ms: summary?.p50 ?? NaN, p99Ms: summary?.p99 ?? NaN };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await storage.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
  process.exit(1);
});
