/** Budget periods in UTC: the start (for the ledger sum), the end (counter expiry) and a key. */
import type { BudgetPeriod } from '../storage/types.js';

export interface PeriodWindow {
  key: string;
  /** ISO start, or undefined for all time. */
  since: string | undefined;
  /** Epoch ms when the period ends, or null for all time. */
  endsAt: number | null;
}

export function periodWindow(period: BudgetPeriod, now = new Date()): PeriodWindow {
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth();
  if (period === 'day') {
    const start = Date.UTC(year, month, now.getUTCDate());
    return { key: `d${new Date(start).toISOString().slice(0, 10)}`, since: new Date(start).toISOString(), endsAt: start + 86_400_000 };
  }
  if (period === 'month') {
    const start = Date.UTC(year, month, 1);
    return { key: `m${new Date(start).toISOString().slice(0, 7)}`, since: new Date(start).toISOString(), endsAt: Date.UTC(year, month + 1, 1) };
  }
  return { key: 'total', since: undefined, endsAt: null };
}
