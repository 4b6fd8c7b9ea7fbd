/**
 * Ledger writes on PostgreSQL in batches: the records queued while no batch could start go in one
 * multi-row INSERT, sharing one round trip, transaction and WAL flush. Up to two batches run at
 * once; records queued meanwhile form the next, so under load a batch grows to what arrived during
 * the last round trip, and a record alone is sent at the end of its event-loop turn.
 *
 * When a batch of several fails on its data (SQLSTATE classes 22 and 23), each record is tried
 * again alone, so only the bad ones are rejected; any other failure (the server gone, a timeout)
 * rejects the batch at once and the ledger retries each record. A request id twice in a batch is
 * sent once; the later one reports "already recorded", as it would after it.
 */
import { usageColumns, usageValues } from '../usage-row.js';
import type { UsageRecord } from '../types.js';

type RunQuery = (sql: string, values: unknown[]) => Promise<{ rows: { request_id: string }[] }>;

interface Entry {
  record: UsageRecord;
  resolve: (inserted: boolean) => void;
  reject: (error: unknown) => void;
}

/** Rows per INSERT at most: 18 parameters a row, well below PostgreSQL's 65,535 a statement. */
const maxBatch = 500;
/** INSERT texts kept for batches up to this many rows; larger ones (rare) are written each time. */
const maxCachedStatement = 64;
const maxInFlight = 2;

export class PostgresUsageBatch {
  private pending: Entry[] = [];
  /** Batches in flight: a count, not a Set (docs/performance.md, "Objects that outlive their request"). */
  private writes = 0;
  /** `settle` waiting for the batches in flight. */
  private idle: (() => void) | null = null;
  private scheduled = false;
  /** The INSERT text by row count, for batches of up to `maxCachedStatement` rows. */
  private readonly statements = new Map<number, string>();
  private readonly flushNow = () => {
    this.scheduled = false;
    this.flush();
  };
  /** A batch settled. */
  private readonly written = () => {
    this.writes--;
    if (this.writes === 0 && this.idle) {
      const idle = this.idle;
      this.idle = null;
      idle();
    }
    this.schedule();
  };

  constructor(private readonly run: RunQuery) {}

  add(record: UsageRecord): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.pending.push({ record, resolve, reject });
      this.schedule();
    });
  }

  /** Sends what is queued now and waits until every batch has settled: at close, before the pool ends. */
  async settle(): Promise<void> {
    while (this.pending.length > 0 || this.writes > 0) {
      this.flush(Number.POSITIVE_INFINITY);
      if (this.writes === 0) continue;
      // One caller: the storage's close, which runs once.
      await new Promise<void>((resolve) => {
        this.idle = resolve;
      });
    }
  }

  private schedule(): void {
    if (this.scheduled || this.pending.length === 0 || this.writes >= maxInFlight) return;
    this.scheduled = true;
    setImmediate(this.flushNow);
  }

  private flush(limit = maxInFlight): void {
    while (this.pending.length > 0 && this.writes < limit) {
      const entries = this.pending.length <= maxBatch ? this.pending : this.pending.slice(0, maxBatch);
      this.pending = entries === this.pending ? [] : this.pending.slice(maxBatch);
      this.writes++;
      // `write` settles its entries and never rejects.
      void this.write(entries).finally(this.written);
    }
  }

  private async write(entries: Entry[]): Promise<void> {
    // The first entry of each request id goes into the INSERT; a later one waits for its answer.
    const first = new Map<string, Entry>();
    for (const entry of entries) if (!first.has(entry.record.requestId)) first.set(entry.record.requestId, entry);
    let inserted: Set<string>;
    try {
      inserted = await this.insert([...first.values()].map((entry) => entry.record));
    } catch (error) {
      if (first.size === 1 || !recordSpecific(error)) {
        for (const entry of entries) entry.reject(error);
        return;
      }
      await Promise.all([...first.values()].map((entry) => this.writeAlone(entry, entries)));
      return;
    }
    for (const entry of entries) entry.resolve(first.get(entry.record.requestId) === entry && inserted.has(entry.record.requestId));
  }

  /** After a failed batch: this record on its own, settling it and its duplicates in `entries`. */
  private async writeAlone(entry: Entry, entries: Entry[]): Promise<void> {
    const id = entry.record.requestId;
    try {
      const inserted = (await this.insert([entry.record])).has(id);
      for (const each of entries) if (each.record.requestId === id) each.resolve(each === entry && inserted);
    } catch (error) {
      for (const each of entries) if (each.record.requestId === id) each.reject(error);
    }
  }

  private async insert(records: UsageRecord[]): Promise<Set<string>> {
    const values: unknown[] = [];
    for (const record of records) values.push(...usageValues(record, false));
    const { rows } = await this.run(this.statementFor(records.length), values);
    return new Set(rows.map((row) => row.request_id));
  }

  private statementFor(count: number): string {
    let sql = this.statements.get(count);
    if (sql === undefined) {
      const width = usageColumns.length;
      const rows: string[] = [];
      for (let row = 0; row < count; row++) rows.push(`(${usageColumns.map((_, column) => `$${row * width + column + 1}`).join(', ')})`);
      sql = `INSERT INTO usage_records (${usageColumns.join(', ')}) VALUES ${rows.join(', ')} ON CONFLICT (request_id) DO NOTHING RETURNING request_id`;
      if (count <= maxCachedStatement) this.statements.set(count, sql);
    }
    return sql;
  }
}

/** A failure caused by a row's values, not by the connection or the server: SQLSTATE class 22 or 23. */
function recordSpecific(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
}
