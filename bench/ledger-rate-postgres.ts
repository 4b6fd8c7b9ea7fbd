/**
 * The PostgreSQL ledger's write rate: W writers, each awaiting one `recordUsage` after another (as W
 * requests finishing at once would), into a scratch database created for the run and dropped after,
 * after a warm-up of up to 5,000 records that is not counted. `--single` writes one INSERT a record
 * instead of the storage's batches, to weigh the batching. Not part of `npm run bench`, which needs
 * no database server.
 *
 *   npm run bench:ledger-postgres -- [--url postgres://postgres@127.0.0.1:5432/postgres]
 *        [--writers 16] [--records 20000] [--single]
 *
 * `--url` names a server and a database to connect to for creating and dropping the scratch one.
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { completionId } from '../src/completions/completion-id.js';
import { createStorage } from '../src/storage/create-storage.js';
import type { UsageRecord } from '../src/storage/types.js';
import { sampleUsageRecord } from './sample-usage-record.js';
import { usageColumns, usageValues } from '../src/storage/usage-row.js';
import { summarise } from './stats.js';

interface Options {
  url: string;
  writers: number;
  records: number;
  single: boolean;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      url: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
      writers: { type: 'string', default: '16' },
      records: { type: 'string', default: '20000' },
      single: { type: 'boolean', default: false },
    },
  });
  const bounded = (text: string, min: number, max: number) => Math.max(min, Math.min(max, Math.floor(Number(text)) || min));
  return { url: values.url, writers: bounded(values.writers, 1, 256), records: bounded(values.records, 1, 1_000_000), single: values.single };
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const scratchName = 'tollgate_ledger_bench';
  const admin = new pg.Client({ connectionString: options.url });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${scratchName} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${scratchName}`);
  const scratch = new URL(options.url);
  scratch.pathname = `/${scratchName}`;
  const storage = await createStorage(scratch.href);
  const pool = new pg.Pool({ connectionString: scratch.href, max: 10 });
  // Dropping the scratch database at the end ends any connection still open to it.
  pool.on('error', () => {});
  try {
    await storage.migrate();
    const account = await storage.createAccount('bench');
    const record = (): UsageRecord => sampleUsageRecord(completionId(), account.id, null, true);
    const singleSql = `INSERT INTO usage_records (${usageColumns.join(', ')}) VALUES (${usageColumns.map((_, index) => `$${index + 1}`).join(', ')}) ON CONFLICT (request_id) DO NOTHING`;
    const write = options.single
      ? async (each: UsageRecord) => (await pool.query(singleSql, usageValues(each, false))).rowCount === 1
      : (each: UsageRecord) => storage.recordUsage(each);
    // Warm-up (not counted): the first thousands of writes also compile the code that makes them.
    const warmup = Math.min(5_000, options.records);
    let warmed = 0;
    await Promise.all(
      Array.from({ length: options.writers }, async () => {
        while (warmed < warmup) {
          warmed++;
          await write(record());
        }
      }),
    );
    const latencies: number[] = [];
    let started = 0;
    const cpuBefore = process.cpuUsage();
    const wallBefore = performance.now();
    await Promise.all(
      Array.from({ length: options.writers }, async () => {
        while (started < options.records) {
          started++;
          const before = performance.now();
          if (!(await write(record()))) throw new Error('a record was not inserted');
          latencies.push(performance.now() - before);
        }
      }),
    );
    const seconds = (performance.now() - wallBefore) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const summary = summarise(latencies);
    const stored = Number((await pool.query<{ count: string }>('SELECT COUNT(*) AS count FROM usage_records')).rows[0].count);
    if (stored !== warmup + options.records) throw new Error(`${stored} records stored, ${warmup + options.records} written`);
    const way = options.single ? 'one INSERT a record' : 'batched (the storage)';
    process.stdout.write(
      `${way}, ${options.writers} writers: ${options.records} records in ${seconds.toFixed(2)} s = ${(options.records / seconds).toFixed(0)}/s; ` +
        `this process's CPU ${((cpu.user + cpu.system) / options.records).toFixed(1)} µs a record; per write p50 ${summary?.p50.toFixed(2)} ms, p99 ${summary?.p99.toFixed(2)} ms\n`,
    );
  } finally {
    await pool.end();
    await storage.close();
    await admin.query(`DROP DATABASE IF EXISTS ${scratchName} WITH (FORCE)`);
    await admin.end();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
  process.exit(1);
});
