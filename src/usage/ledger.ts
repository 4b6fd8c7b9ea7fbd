/**
 * The usage ledger: exactly one record per authenticated request, idempotent on the request id,
 * committed before the response's last byte. A write that fails is retried (safe: idempotent);
 * when it still fails the caller must not report success (no unmetered success).
 */
import type { Logger, RequestLogIds } from '../observability/logger.js';
import type { Storage, UsageRecord } from '../storage/types.js';

export interface LedgerObserver {
  onWrite(seconds: number, record: UsageRecord): void;
}

export class Ledger {
  constructor(
    private readonly storage: Storage,
    private readonly logger: Logger,
    private readonly observer: LedgerObserver | null = null,
  ) {}

  /** Writes the record; throws after retries fail. Returns false when it was already recorded. `ids` go on its log lines. */
  async record(record: UsageRecord, ids: RequestLogIds): Promise<boolean> {
    const started = performance.now();
    let lastError: unknown;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const inserted = await this.storage.recordUsage(record);
        this.observer?.onWrite((performance.now() - started) / 1000, record);
        return inserted;
      } catch (error) {
        lastError = error;
        this.logger.warn({ requestId: ids.requestId, completionId: ids.completionId, attempt, err: (error as Error).message }, 'ledger write failed');
        await new Promise((resolve) => setTimeout(resolve, 20 * (attempt + 1)));
      }
    }
    throw lastError;
  }
}
