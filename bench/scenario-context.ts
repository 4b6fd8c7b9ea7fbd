/** What the scenarios beside the matrix (slow streams, soak) share: each starts its own fresh Tollgate. */
export interface ScenarioContext {
  /** The mock upstream's origin. */
  mockOrigin: string;
  /** Tollgate's LOG_LEVEL. */
  logLevel: string;
  /** Parent directory of Tollgate's fresh databases. */
  dbDir: string;
  log(line: string): void;
}
