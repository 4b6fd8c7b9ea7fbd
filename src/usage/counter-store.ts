/**
 * Windowed counters with an atomic multi-key check-and-add. The in-memory store serves one
 * process; the Redis store (redis-counter-store.ts) the same contract across processes.
 */
export interface CounterReservation {
  key: string;
  amount: number;
  /** The most the counter may hold after adding `amount`. */
  limit: number;
  /** When the counter's window ends (epoch ms); it is dropped after that. Null: never. */
  expiresAt: number | null;
}

export type ReserveResult = { ok: true; values: number[] } | { ok: false; index: number; value: number };

export interface CounterStore {
  /** All or nothing: adds every amount when each counter stays within its limit, else adds none. */
  tryReserve(items: CounterReservation[]): Promise<ReserveResult>;
  /** Adds (possibly negative) amounts; used to settle a reservation to the actual count. */
  add(items: { key: string; amount: number; expiresAt: number | null }[]): Promise<void>;
  /** Sets the counter when it does not exist yet (seeding from the ledger). Returns true when set. */
  seed(key: string, value: number, expiresAt: number | null): Promise<boolean>;
  /** Whether the counter exists. */
  has(key: string): Promise<boolean>;
  close(): Promise<void>;
}

interface Entry {
  value: number;
  expiresAt: number | null;
}

export class MemoryCounterStore implements CounterStore {
  private readonly entries = new Map<string, Entry>();
  private readonly sweeper: NodeJS.Timeout;

  constructor() {
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  async tryReserve(items: CounterReservation[]): Promise<ReserveResult> {
    return this.tryReserveNow(items);
  }

  /** Synchronous core: no await between the check and the add, so concurrent requests serialise. */
  tryReserveNow(items: CounterReservation[]): ReserveResult {
    const now = Date.now();
    const values: number[] = [];
    for (let index = 0; index < items.length; index++) {
      const item = items[index];
      const current = this.current(item.key, now);
      if (current + item.amount > item.limit) return { ok: false, index, value: current };
      values.push(current + item.amount);
    }
    items.forEach((item, index) => this.entries.set(item.key, { value: values[index], expiresAt: item.expiresAt }));
    return { ok: true, values };
  }

  async add(items: { key: string; amount: number; expiresAt: number | null }[]): Promise<void> {
    this.addNow(items);
  }

  addNow(items: { key: string; amount: number; expiresAt: number | null }[]): void {
    const now = Date.now();
    for (const item of items) {
      const current = this.current(item.key, now);
      this.entries.set(item.key, { value: current + item.amount, expiresAt: item.expiresAt });
    }
  }

  async seed(key: string, value: number, expiresAt: number | null): Promise<boolean> {
    if (this.current(key, Date.now(), true) !== undefined) return false;
    this.entries.set(key, { value, expiresAt });
    return true;
  }

  async has(key: string): Promise<boolean> {
    return this.current(key, Date.now(), true) !== undefined;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }

  private current(key: string, now: number): number;
  private current(key: string, now: number, raw: true): number | undefined;
  private current(key: string, now: number, raw = false): number | undefined {
    const entry = this.entries.get(key);
    if (!entry || (entry.expiresAt !== null && entry.expiresAt <= now)) {
      if (entry) this.entries.delete(key);
      return raw ? undefined : 0;
    }
    return entry.value;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, entry] of this.entries) if (entry.expiresAt !== null && entry.expiresAt <= now) this.entries.delete(key);
  }
}
