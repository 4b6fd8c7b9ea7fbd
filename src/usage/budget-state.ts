/** Each budget of an account with what the ledger holds for its current period: for the dashboard and `tollgate budgets list`. */
import type { Budget, Storage } from '../storage/types.js';
import { periodWindow } from './budget-periods.js';

export interface BudgetState {
  budget: Budget;
  /** Tokens, or nanodollars for a USD budget, recorded in the current period. */
  used: number;
  /** ISO start of the current period; undefined for a total budget. */
  periodStart: string | undefined;
  /** Epoch ms when the period ends; null for a total budget. */
  resetsAt: number | null;
}

export async function budgetStates(storage: Storage, accountId: string, now = new Date()): Promise<BudgetState[]> {
  const budgets = await storage.listBudgets(accountId);
  return Promise.all(
    budgets.map(async (budget) => {
      const window = periodWindow(budget.period, now);
      const used = await storage.sumUsage({ accountId, keyId: budget.keyId, since: window.since, unit: budget.unit });
      return { budget, used, periodStart: window.since, resetsAt: window.endsAt };
    }),
  );
}
