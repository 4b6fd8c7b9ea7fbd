/**
 * Ledger writes that finish in the same event-loop turn commit in one transaction, and every waiter
 * resolves only after the commit. `hold` keeps commits back while the checkpointer starts the log
 * over. When a batch fails for another reason than the lock, each record is tried on its own.
 *
 * A commit never waits for a lock inside SQLite (no busy timeout): SQLITE_BUSY is retried from a
 * timer, later records joining it. SQLite's own busy handler sleeps on the event loop (two cluster
 * workers on one file stalled each other's loops for up to 54 ms).
 *
 * Group commit: a commit costs ~50 µs of CPU, each record ~15 µs more, so a batch waits another
 * turn while each turn brings more records, for at most `groupWaitMs` (2 ms; 1 ms cost 3–5% more
 * CPU a stream); a record alone in its turn commits at the end of that turn.
 */
import type { UsageRecord } from '../types.js';

interface Entry {
  record: UsageRecord;
  resolve: (inserted: boolean) => void;
  reject: (error: unknown) => void;
}

/** Waits between tries while the lock is taken: short first (another commit holds it for tens of µs), then at most 8 ms (a checkpoint starting the log over holds it for a few ms). */
const retryDelaysMs = [1, 1, 2, 2, 4, 8];
/** A batch this large commits at once. */
const maxBatch = 512;

export class UsageBatch {
  private pending: Entry[] = [];
  private scheduled = false;
  private held = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private busySince: number | null = null;
  private busyTries = 0;
  /** Group commit: when the batch's first record was queued, and the batch's size at the last turn. */
  private firstQueuedAt = 0;
  private sizeAtLastTurn = 0;
  /** A turn passed: wait another while the turn brought records (and the batch is young and small), else commit. */
  private readonly onTurn = () => {
    const size = this.pending.length;
    if (size > this.sizeAtLastTurn && size < maxBatch && !this.held && performance.now() - this.firstQueuedAt < this.groupWaitMs) {
      this.sizeAtLastTurn = size;
      setImmediate(this.onTurn);
      return;
    }
    this.flush();
  };
  private readonly retryNow = () => {
    this.retryTimer = null;
    this.flush();
  };

  /**
   * @param write commits the records in one transaction (throws SQLITE_BUSY without waiting when locked)
   * @param busyLimitMs how long a batch keeps being retried while the lock is taken before its waiters get the error
   * @param groupWaitMs how long a batch's first record may wait for the records of later turns
   */
  constructor(
    private readonly write: (records: UsageRecord[]) => boolean[],
    private readonly busyLimitMs: number,
    private readonly groupWaitMs = 2,
  ) {}

  add(record: UsageRecord): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.pending.push({ record, resolve, reject });
      this.schedule();
    });
  }

  hold(): void {
    this.held = true;
  }

  release(): void {
    if (!this.held) return;
    this.held = false;
    this.schedule();
  }

  /** Stops retrying (at close, after the last forced flush). */
  stop(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  private schedule(): void {
    // While a retry is due, new records wait for it: trying again at every turn would spin on the lock.
    if (this.scheduled || this.held || this.retryTimer) return;
    this.scheduled = true;
    this.firstQueuedAt = performance.now();
    // Records queued in the rest of this turn count as the turn bringing more; a record alone in
    // its turn commits at once (always waiting a turn more was measured: no gain under load).
    this.sizeAtLastTurn = this.pending.length;
    setImmediate(this.onTurn);
  }

  /** Commits what is queued; `force` (at close) even while held, and without retrying. */
  flush(force = false): void {
    this.scheduled = false;
    if (this.held && !force) return;
    const entries = this.pending;
    if (entries.length === 0) return;
    this.pending = [];
    let inserted: boolean[];
    try {
      inserted = this.write(entries.map((entry) => entry.record));
    } catch (error) {
      if (!force && isBusy(error) && this.keepTrying()) {
        this.pending = entries.concat(this.pending);
        this.retryTimer = setTimeout(this.retryNow, retryDelaysMs[Math.min(this.busyTries - 1, retryDelaysMs.length - 1)]);
        return;
      }
      this.busySince = null;
      if (isBusy(error) || entries.length === 1) {
        for (const entry of entries) entry.reject(error);
        return;
      }
      // One record that cannot be stored must not fail the others: each is tried on its own.
      for (const entry of entries) this.writeAlone(entry);
      return;
    }
    this.busySince = null;
    entries.forEach((entry, index) => {
      entry.resolve(inserted[index]);
    });
  }

  /** After a failed batch: one record in a transaction of its own (the ledger retries it if it fails). */
  private writeAlone(entry: Entry): void {
    try {
      entry.resolve(this.write([entry.record])[0]);
    } catch (error) {
      entry.reject(error);
    }
  }

  /** Whether the lock has been taken for less than `busyLimitMs`; counts the try. */
  private keepTrying(): boolean {
    const now = performance.now();
    if (this.busySince === null) {
      this.busySince = now;
      this.busyTries = 0;
    }
    this.busyTries++;
    return now - this.busySince < this.busyLimitMs;
  }
}

/** SQLITE_BUSY and its extended codes (SQLITE_BUSY_SNAPSHOT, SQLITE_BUSY_RECOVERY, …). */
function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}
