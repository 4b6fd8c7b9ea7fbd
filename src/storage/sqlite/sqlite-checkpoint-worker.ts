/**
 * Runs WAL checkpoints on its own connection in a worker thread, so the fsyncs of a checkpoint
 * never block the event loop that serves requests. The main connection has autocheckpoint off.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const { path, intervalMs } = workerData as { path: string; intervalMs: number };
const db = new Database(path);
db.pragma('busy_timeout = 5000');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const timer = setInterval(() => {
  try {
    checkpoint.run();
  } catch (error) {
    parentPort?.postMessage({ type: 'error', message: (error as Error).message });
  }
}, intervalMs);
parentPort?.on('message', (message: { type?: string }) => {
  if (message?.type !== 'stop') return;
  clearInterval(timer);
  try {
    db.prepare('PRAGMA wal_checkpoint(PASSIVE)').run();
  } finally {
    db.close();
    parentPort?.close();
  }
});
