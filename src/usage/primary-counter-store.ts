/**
 * Counters held by the cluster's primary process, reached over the worker IPC channel. The
 * primary is single-threaded and applies each check-and-add at once, so N workers without Redis
 * still enforce one limit, never N times it.
 */
import type { Worker } from 'node:cluster';
import type { CounterChange, CounterReservation, CounterStore, ReserveResult } from './counter-store.js';

type Operation =
  | { op: 'reserve'; items: CounterReservation[]; now: number }
  | { op: 'add'; items: CounterChange[]; now: number }
  | { op: 'seed'; key: string; value: number; expiresAt: number | null }
  | { op: 'has'; key: string };

interface Request {
  type: 'tollgate-counter';
  id: number;
  operation: Operation;
}
interface Reply {
  type: 'tollgate-counter-reply';
  id: number;
  result?: unknown;
  error?: string;
}

interface Waiter {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** Worker side. */
export class PrimaryCounterStore implements CounterStore {
  private nextId = 1;
  /** Calls waiting for the primary, by id: an object, not a Map (docs/performance.md, "Objects that outlive their request"). */
  private readonly pending: Record<number, Waiter | undefined> = {};
  private readonly onMessage = (message: unknown) => {
    const reply = message as Reply;
    if (reply?.type !== 'tollgate-counter-reply') return;
    const waiter = this.take(reply.id);
    if (!waiter) return;
    if (reply.error) waiter.reject(new Error(reply.error));
    else waiter.resolve(reply.result);
  };

  constructor() {
    if (!process.send) throw new Error('PrimaryCounterStore needs an IPC channel to the primary');
    process.on('message', this.onMessage);
  }

  private call<T>(operation: Operation): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      if (!process.send) throw new Error('PrimaryCounterStore needs an IPC channel to the primary');
      const timer = setTimeout(() => this.take(id)?.reject(new Error('the primary process did not answer')), 5_000);
      this.pending[id] = { resolve: resolve as (value: unknown) => void, reject, timer };
      const request: Request = { type: 'tollgate-counter', id, operation };
      process.send(request, undefined, undefined, (error) => {
        if (error) this.take(id)?.reject(error);
      });
    });
  }

  /** Removes a waiting call, its timer stopped. */
  private take(id: number): Waiter | undefined {
    const waiter = this.pending[id];
    if (waiter === undefined) return undefined;
    delete this.pending[id];
    clearTimeout(waiter.timer);
    return waiter;
  }

  tryReserve(items: CounterReservation[], now: number): Promise<ReserveResult> {
    return this.call({ op: 'reserve', items, now });
  }

  async add(items: CounterChange[], now: number): Promise<void> {
    await this.call({ op: 'add', items, now });
  }

  seed(key: string, value: number, expiresAt: number | null): Promise<boolean> {
    return this.call({ op: 'seed', key, value, expiresAt });
  }

  has(key: string): Promise<boolean> {
    return this.call({ op: 'has', key });
  }

  async close(): Promise<void> {
    process.off('message', this.onMessage);
    for (const id of Object.keys(this.pending)) this.take(Number(id))?.reject(new Error('closed'));
  }
}

/** Primary side: answers one worker's counter requests from the shared in-memory store. */
export function serveCounters(worker: Worker, store: CounterStore): void {
  worker.on('message', async (message: unknown) => {
    const request = message as Request;
    if (request?.type !== 'tollgate-counter') return;
    let reply: Reply;
    try {
      const operation = request.operation;
      let result: unknown;
      if (operation.op === 'reserve') result = await store.tryReserve(operation.items, operation.now);
      else if (operation.op === 'add') result = await store.add(operation.items, operation.now);
      else if (operation.op === 'seed') result = await store.seed(operation.key, operation.value, operation.expiresAt);
      else result = await store.has(operation.key);
      reply = { type: 'tollgate-counter-reply', id: request.id, result };
    } catch (error) {
      reply = { type: 'tollgate-counter-reply', id: request.id, error: (error as Error).message };
    }
    if (worker.isConnected()) worker.send(reply);
  });
}
