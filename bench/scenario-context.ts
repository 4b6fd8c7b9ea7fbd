/** What the scenarios beside the matrix (slow streams, soak) share: each starts its own fresh Tollgate. */
import type { LoadClient } from './load-client.js';

export interface ScenarioContext {
  load: LoadClient;
  /** The mock upstream's origin. */
  mockOrigin: string;
  /** Tollgate's LOG_LEVEL. */
  logLevel: string;
  /** Parent directory of Tollgate's fresh databases. */
  dbDir: string;
  log(line: string): void;
}
