/**
 * Runs WAL checkpoints on its own connection in a worker thread, so the fsyncs of a checkpoint
 * never block the event loop that serves requests. The main connection has autocheckpoint off.
 *
 * A PASSIVE checkpoint copies the log into the database but never waits for the writer, and
 * SQLite starts the log over only once every frame in it was copied before the next write. Under
 * steady ledger writes that moment never came and the log grew without end (4 GB in 150 s of the
 * benchmark, with its index in shared memory counted in RSS). So once the log passes
 * `restartFrames`, the worker asks the main thread to hold its ledger commits, finishes the copy
 * with nothing writing (RESTART: the next commit writes the log from its start, so the file stays
 * near `restartFrames` pages) and lets it go on. Measured under the benchmark's load: commits held
 * 5–8 ms once every ~2.5 s. TRUNCATE would also give the file's space back, but truncating 64 MiB
 * took ~23 ms more.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const { path, intervalMs, restartFrames, cacheKiB } = workerData as { path: string; intervalMs: number; restartFrames: number; cacheKiB: number };
const db = new Database(path);
db.pragma('busy_timeout = 5000');
db.pragma(`cache_size = -${cacheKiB}`);
const passive = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const restart = db.prepare('PRAGMA wal_checkpoint(RESTART)');

let restartAsked = false;
const timer = setInterval(() => {
  try {
    const { log } = passive.get() as { log: number };
    if (!restartAsked && log >= restartFrames) {
      restartAsked = true;
      parentPort?.postMessage({ type: 'hold-writes' });
    }
  } catch (error) {
    parentPort?.postMessage({ type: 'error', message: (error as Error).message });
  }
}, intervalMs);

parentPort?.on('message', (message: { type?: string }) => {
  if (message?.type === 'writes-held') {
    // The main thread holds its commits until `restarted`, whatever happens here.
    try {
      restart.run();
    } catch (error) {
      parentPort?.postMessage({ type: 'error', message: (error as Error).message });
    } finally {
      restartAsked = false;
      parentPort?.postMessage({ type: 'restarted' });
    }
    return;
  }
  if (message?.type !== 'stop') return;
  clearInterval(timer);
  try {
    passive.run();
  } finally {
    db.close();
    parentPort?.close();
  }
});
