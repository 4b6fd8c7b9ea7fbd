/**
 * Counters with an atomic multi-key check-and-add. A period counter (budgets) holds what was added
 * until `expiresAt`; a rate counter (`drainPerMs` set: rpm and tpm) is a token bucket of capacity
 * `limit` that drains continuously, so there is no window edge where twice the limit gets through
 * (OpenAI and Anthropic describe their limits this way). The in-memory store serves one process,
 * the Redis store several (test/counter-store-contract.test.ts runs both). `now` comes from the
 * caller, so every instance drains by the same arithmetic and tests can move time.
 */
export interface CounterChange {
  key: string;
  /** Added to the counter; negative when settling a reservation down to the actual count. */
  amount: number;
  /** Period counter: when it is dropped (epoch ms); null: never. Ignored for rate counters. */
  expiresAt: number | null;
  /** Rate counter: how much it drains per millisecond (limit / 60,000 for a per-minute limit). */
  drainPerMs?: number;
}

export interface CounterReservation extends CounterChange {
  /** The most the counter may hold after adding `amount`. */
  limit: number;
}

/** `values`: each counter after the add. Refused: which item, and what its counter holds now. */
export type ReserveResult = { ok: true; values: number[] } | { ok: false; index: number; value: number };

export interface CounterStore {
  /** All or nothing: adds every amount when each counter stays within its limit, else adds none. */
  tryReserve(items: CounterReservation[], now: number): Promise<ReserveResult>;
  /** Adds (possibly negative) amounts; a counter never goes below 0. */
  add(items: CounterChange[], now: number): Promise<void>;
  /** Sets a period counter when it does not exist yet (seeding from the ledger). True when set. */
  seed(key: string, value: number, expiresAt: number | null): Promise<boolean>;
  /** Whether the counter exists. */
  has(key: string): Promise<boolean>;
  close(): Promise<void>;
}

interface Entry {
  value: number;
  /** When `value` was computed (rate counters drain from here). */
  at: number;
  /** Dropped at this time; null: never. */
  expiresAt: number | null;
}

export class MemoryCounterStore implements CounterStore {
  private readonly entries = new Map<string, Entry>();
  private readonly sweeper: NodeJS.Timeout;

  constructor() {
    this.sweeper = setInterval(() => this.sweep(Date.now()), 60_000);
    this.sweeper.unref();
  }

  /** No await between the check and the add, so concurrent requests serialise. */
  async tryReserve(items: CounterReservation[], now: number): Promise<ReserveResult> {
    const values: number[] = [];
    for (let index = 0; index < items.length; index++) {
      const item = items[index];
      const current = this.current(item.key, now, item.drainPerMs ?? 0);
      if (current + item.amount > item.limit) return { ok: false, index, value: current };
      values.push(current + item.amount);
    }
    for (let index = 0; index < items.length; index++) this.put(items[index], values[index], now);
    return { ok: true, values };
  }

  async add(items: CounterChange[], now: number): Promise<void> {
    for (const item of items) this.put(item, Math.max(0, this.current(item.key, now, item.drainPerMs ?? 0) + item.amount), now);
  }

  async seed(key: string, value: number, expiresAt: number | null): Promise<boolean> {
    const now = Date.now();
    if (this.live(key, now)) return false;
    this.entries.set(key, { value, at: now, expiresAt });
    return true;
  }

  async has(key: string): Promise<boolean> {
    return this.live(key, Date.now()) !== undefined;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }

  private put(item: CounterChange, value: number, now: number): void {
    const drainPerMs = item.drainPerMs ?? 0;
    // A rate counter is kept until it has drained to 0.
    const expiresAt = drainPerMs > 0 ? now + Math.ceil(value / drainPerMs) : item.expiresAt;
    this.entries.set(item.key, { value, at: now, expiresAt });
  }

  private current(key: string, now: number, drainPerMs: number): number {
    const entry = this.live(key, now);
    if (!entry) return 0;
    if (drainPerMs <= 0) return entry.value;
    return Math.max(0, entry.value - Math.max(0, now - entry.at) * drainPerMs);
  }

  private live(key: string, now: number): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt !== null && entry.expiresAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  private sweep(now: number): void {
    for (const [key, entry] of this.entries) if (entry.expiresAt !== null && entry.expiresAt <= now) this.entries.delete(key);
  }
}
