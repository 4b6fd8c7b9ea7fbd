/** `npm run bench`'s ledger phase: runs ledger-rate-sqlite.ts as a child on the gateway core and reads its result. */
import { fileURLToPath } from 'node:url';
import { gatewayCore } from './gateways.js';
import { spawnProcess } from './processes.js';

/** The SQLite ledger's sequential insert rate. */
export interface LedgerRateResult {
  records: number;
  seconds: number;
  perSecond: number;
  /** Per insert, ms. */
  p50Ms: number;
  p99Ms: number;
}

export async function runLedgerRate(records: number, log: (line: string) => void): Promise<LedgerRateResult> {
  const script = fileURLToPath(new URL('./ledger-rate-sqlite.js', import.meta.url));
  const child = spawnProcess({ name: 'ledger rate', core: gatewayCore, args: [script, String(records)] });
  try {
    const { match } = await child.waitFor(/^\{.*\}$/m, 120_000);
    const result: LedgerRateResult = JSON.parse(match[0]);
    log(
      `  ledger: ${result.records} sequential inserts in ${result.seconds.toFixed(2)} s = ${result.perSecond.toFixed(0)}/s (p50 ${(result.p50Ms * 1000).toFixed(0)} µs, p99 ${(result.p99Ms * 1000).toFixed(0)} µs)`,
    );
    return result;
  } finally {
    await child.stop();
  }
}
