/**
 * WAL checkpoints on the main thread, with their fsyncs on libuv's thread pool, so the disk's
 * flushes never block the event loop (a worker thread for this cost ~8 MiB of RSS). The ledger
 * connection has autocheckpoint off.
 *
 * SQLite's own checkpoint flushes the log, copies frames into the database, flushes the database,
 * and only then lets a writer start the log over. Here the checkpointing connection runs with
 * synchronous=OFF and the flushes are done around it, off the loop, in the same order, while a read
 * on a connection of our own pins the log (SQLite copies no frame past an open reader's snapshot,
 * and no writer starts the log over under it):
 *   1. begin a read on the reader connection: its snapshot is the log as it stands;
 *   2. flush the log file (thread pool): every frame up to the snapshot is on disk;
 *   3. PASSIVE checkpoint, unsynced: copies those frames (never a later one) into the database;
 *   4. flush the database file (thread pool);
 *   5. end the read: only now may a writer start the log over.
 * A power cut anywhere in between finds every copied frame still in the flushed log.
 *
 * A read that starts when every frame is already copied pins nothing, so such a round (nothing
 * committed since the previous round's snapshot, which copied all it saw) is skipped. The first
 * round, with no previous one, copies under the write lock with SQLite's own flushes. This counts
 * on no other program checkpointing the file meanwhile.
 *
 * Steady ledger writes never let SQLite start the log over (it grew to 4 GB in 150 s of the
 * benchmark), so past `restartFrames` ledger commits are held for one round that copies the whole
 * log. If another process kept writing (cluster workers share the file), the reader takes the
 * write lock (waiting from a timer, never inside SQLite) and copies the rest with SQLite's flushes.
 */
import { type FileHandle, open } from 'node:fs/promises';
import Database from 'better-sqlite3';

export interface CheckpointTiming {
  /** Log frames at which it is started over (default 16,384: 64 MiB of 4 KiB pages). */
  restartFrames: number;
  /** How often a checkpoint round starts, ms. */
  intervalMs: number;
}

/** What the checkpointer needs of the ledger's group commit. */
export interface HoldableWrites {
  hold(): void;
  release(): void;
}

export interface Checkpointer {
  /** One last round, then the connections close. */
  stop(): Promise<void>;
}

/** How long ledger commits may be held for a restart before they go on regardless. */
const holdLimitMs = 1_000;

interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

/** fdatasync of one file on the thread pool; a file that is not there has nothing to flush. */
async function flush(file: string): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    await handle.datasync();
  } finally {
    await handle.close();
  }
}

/**
 * Starts the rounds; null when its connections cannot be opened (the caller leaves checkpoints to
 * SQLite). `onFailure` runs once if a round fails: the rounds stop and the caller turns SQLite's own
 * autocheckpoint back on.
 */
export function startCheckpointer(path: string, writes: HoldableWrites, timing: CheckpointTiming, onFailure: (error: Error) => void): Checkpointer | null {
  let checkpointDb: Database.Database;
  let readerDb: Database.Database;
  try {
    checkpointDb = new Database(path);
    readerDb = new Database(path);
  } catch {
    return null;
  }
  // Neither connection holds pages for long: the copy reads frames straight from the log.
  for (const connection of [checkpointDb, readerDb]) connection.pragma('cache_size = -256');
  checkpointDb.pragma('synchronous = OFF');
  checkpointDb.pragma('wal_autocheckpoint = 0');
  readerDb.pragma('busy_timeout = 0');
  const passive = checkpointDb.prepare('PRAGMA wal_checkpoint(PASSIVE)');
  const beginRead = readerDb.prepare('BEGIN');
  const beginWrite = readerDb.prepare('BEGIN IMMEDIATE');
  const endWrite = readerDb.prepare('ROLLBACK');
  const snapshot = readerDb.prepare('SELECT 1 FROM sqlite_master LIMIT 1');
  const dataVersion = readerDb.prepare('PRAGMA data_version').pluck();
  const endRead = readerDb.prepare('COMMIT');
  const logFile = `${path}-wal`;

  let stopped = false;
  let running: Promise<void> | null = null;

  // What the previous round saw: the reader's data version (it changes with every commit by
  // another connection) and whether frames were left uncopied. Null until the first round, which
  // cannot know whether its read pins the log and so copies with SQLite's own flushes instead.
  let previous: { version: number; uncopied: boolean } | null = null;
  /** Inside a transaction on the reader: its snapshot taken, its data version. */
  const readVersion = (): number => {
    snapshot.get();
    return dataVersion.get() as number;
  };
  const remember = (version: number, result: CheckpointResult) => {
    previous = { version, uncopied: result.busy !== 0 || result.checkpointed < result.log };
  };

  /**
   * Steps 1–5 above: the log's size and how much of it is now in the database, or null when the
   * round had nothing it could safely copy (see the top of this file).
   */
  const round = async (): Promise<CheckpointResult | null> => {
    beginRead.run();
    try {
      const version = readVersion();
      if (previous === null) return null; // the first round is `copyRestUnderWriteLock`
      if (!previous.uncopied && previous.version === version) return null;
      await flush(logFile);
      const result = passive.get() as CheckpointResult;
      await flush(path);
      remember(version, result);
      return result;
    } finally {
      if (readerDb.inTransaction) endRead.run();
    }
  };

  /**
   * The rest of the log with every other writer shut out: the write lock is waited for from a timer
   * (another process's commit holds it for microseconds), then taken, used and let go in one turn
   * of the loop, so a write of this process's own that waits inside SQLite cannot be waiting for us.
   */
  const copyRestUnderWriteLock = async (deadline: number): Promise<void> => {
    for (;;) {
      try {
        beginWrite.run();
        break;
      } catch (error) {
        if (!(error as { code?: string }).code?.startsWith('SQLITE_BUSY')) throw error;
        if (stopped || performance.now() >= deadline) return; // the next restart tries again
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    }
    try {
      const version = readVersion();
      checkpointDb.pragma('synchronous = NORMAL');
      try {
        // The next round's pin depends on what is left now (see `round`).
        remember(version, passive.get() as CheckpointResult);
      } finally {
        checkpointDb.pragma('synchronous = OFF');
      }
    } finally {
      endWrite.run();
    }
  };

  /** Writes held for a round that copies the whole log, so the next commit starts it over. */
  const restartLog = async (): Promise<void> => {
    const deadline = performance.now() + holdLimitMs;
    writes.hold();
    const limit = setTimeout(() => writes.release(), holdLimitMs);
    limit.unref();
    try {
      const result = await round();
      // Another process wrote meanwhile.
      if (result && result.checkpointed < result.log) await copyRestUnderWriteLock(deadline);
    } finally {
      clearTimeout(limit);
      writes.release();
    }
  };

  const tick = async (): Promise<void> => {
    if (previous === null) return copyRestUnderWriteLock(performance.now() + holdLimitMs);
    const result = await round();
    if (result && result.log >= timing.restartFrames && !stopped) await restartLog();
  };

  const timer = setInterval(() => {
    if (running || stopped) return;
    running = tick()
      .catch((error: Error) => {
        if (stopped) return;
        stopped = true;
        clearInterval(timer);
        onFailure(error);
      })
      .finally(() => {
        running = null;
      });
  }, timing.intervalMs);
  timer.unref();

  return {
    async stop() {
      if (!stopped) {
        stopped = true;
        clearInterval(timer);
      }
      await running;
      try {
        // What the log holds now goes into the database before the connections close.
        await round();
      } catch {
        // The last connection to close checkpoints the log itself.
      }
      readerDb.close();
      checkpointDb.close();
    },
  };
}
