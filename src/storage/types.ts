/**
 * The storage interface. SQLite and PostgreSQL implement it and pass one contract suite
 * (test/storage-contract.test.ts). Only `create-storage.ts` imports a driver. A method that cannot
 * reach the database rejects with the 503 `storage_unavailable`; creating an account under a name
 * already taken rejects with the 409 `account_exists`.
 */

export interface Account {
  id: string;
  name: string;
  /** ISO 8601. */
  createdAt: string;
}

export interface ApiKey {
  id: string;
  accountId: string;
  name: string | null;
  /** The first characters of the key, safe to display (`tg_abc123…`). */
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
}

/** A key with its stored secret hash, for the auth check only. */
export interface ApiKeyWithHash extends ApiKey {
  /** SHA-256 of the key's secret part, hex. */
  secretHash: string;
}

export type UsageOutcome = 'success' | 'invalid_request' | 'vendor_error' | 'cancelled' | 'rate_limited' | 'error';

/** Exactly one per authenticated request, keyed by the gateway's request id. */
export interface UsageRecord {
  requestId: string;
  accountId: string;
  keyId: string | null;
  /** As the caller wrote it (`vendor/name`), or whatever it sent when invalid (truncated). */
  model: string;
  vendor: string | null;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  cachedTokens: number | null;
  reasoningTokens: number | null;
  /** True when counts come from the gateway's tokenizer, not the vendor. */
  estimated: boolean;
  /** What the request cost in nanodollars (10⁻⁹ USD) at the configured prices; null when tokens were used on a model without a price. */
  costNanoUsd: number | null;
  stream: boolean;
  outcome: UsageOutcome;
  /** The HTTP status the client got (200 for a stream that later failed is recorded with its error status). */
  status: number;
  /** The error code, when the request failed. */
  errorCode: string | null;
  latencyMs: number;
  /** Time to first token, ms; null when no token was produced. */
  ttftMs: number | null;
  /** ISO 8601, when the request arrived. */
  createdAt: string;
}

export type UsageGroupBy = 'model' | 'day' | 'key';

export interface UsageQuery {
  /** Omit for all accounts (admin). */
  accountId?: string;
  /** Inclusive lower bound, ISO 8601. */
  since?: string;
  /** Exclusive upper bound, ISO 8601. */
  until?: string;
  groupBy?: UsageGroupBy;
}

export interface UsageTotals {
  requests: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  /** Requests whose counts were estimated by the gateway. */
  estimatedRequests: number;
  /** Nanodollars (10⁻⁹ USD) over the priced requests. */
  costNanoUsd: number;
  /** Requests that used tokens on a model without a price: their cost is not in `costNanoUsd`. */
  unpricedRequests: number;
}

export interface UsageGroup extends UsageTotals {
  /** The model, the day (YYYY-MM-DD, UTC) or the key id; null for requests without one. */
  group: string | null;
}

export interface UsageReport {
  groups: UsageGroup[];
  totals: UsageTotals;
}

export type BudgetPeriod = 'day' | 'month' | 'total';

/** What a budget counts: tokens, or US dollars (held as nanodollars). */
export type BudgetUnit = 'tokens' | 'usd';

/** An account or key has at most one budget per unit: a token budget and a USD budget may both apply. */
export interface Budget {
  accountId: string;
  /** Null for the account-wide budget. */
  keyId: string | null;
  unit: BudgetUnit;
  /** Tokens, or nanodollars (10⁻⁹ USD) for a USD budget. */
  limit: number;
  period: BudgetPeriod;
}

export interface RateLimit {
  /** Exactly one of accountId / keyId is set. */
  accountId: string | null;
  keyId: string | null;
  /** Requests per minute; null = unlimited. */
  rpm: number | null;
  /** Tokens per minute; null = unlimited. */
  tpm: number | null;
}

/** Where an `Idempotency-Key` applies: one account, one route, one key. */
export interface IdempotencyScope {
  accountId: string;
  /** The route's path (`/v5/completions`); the same key on another route is another entry. */
  route: string;
  /** The client's key, 1–255 printable ASCII characters. */
  key: string;
}

/** A response as it was sent, to be replayed byte for byte. */
export interface StoredResponse {
  status: number;
  /** The headers a replay repeats (content type and the like), lower-case names. */
  headers: Record<string, string>;
  /** The exact bytes of the body (for a stream, the whole event text). */
  body: Buffer;
}

/** One key's entry: claimed while its first request runs, then holding that request's response. */
export interface IdempotencyEntry extends IdempotencyScope {
  /** SHA-256 (hex) of the request the key was first used with. */
  fingerprint: string;
  /** The id of the completion that produced the response; null while the first request runs. */
  completionId: string | null;
  /** Null while the first request runs. */
  response: StoredResponse | null;
  /** ISO 8601, when the entry was claimed. */
  createdAt: string;
  /** ISO 8601: from then on the entry counts as absent (a claim's lease, or a response's 24 h). */
  expiresAt: string;
}

/** Whose claim an update is: only the request holding `token` may renew, complete or release it. */
export interface IdempotencyHolder extends IdempotencyScope {
  token: string;
}

export interface Storage {
  /** `sqlite` or `postgres`. */
  readonly kind: string;
  /** Applies pending versioned migrations; returns the versions applied now. */
  migrate(): Promise<number[]>;
  /** Throws when the database is unreachable. */
  ping(): Promise<void>;

  createAccount(name: string): Promise<Account>;
  getAccount(id: string): Promise<Account | null>;
  listAccounts(): Promise<Account[]>;
  countAccounts(): Promise<number>;

  createKey(input: { accountId: string; name: string | null; prefix: string; secretHash: string; id: string }): Promise<ApiKey>;
  /** The key with its hash, revoked or not; null when absent. */
  getKeyWithHash(keyId: string): Promise<ApiKeyWithHash | null>;
  listKeys(accountId: string): Promise<ApiKey[]>;
  /** False when there is no such key or it was already revoked. */
  revokeKey(keyId: string): Promise<boolean>;
  /**
   * Calls `listener` after a key is revoked through this storage object (this process only; other
   * processes' revocations reach a key cache when its entry expires). Returns the unsubscribe.
   */
  watchKeys(listener: (keyId: string) => void): () => void;

  /** Idempotent on requestId: returns false (and changes nothing) when a record already exists. */
  recordUsage(record: UsageRecord): Promise<boolean>;
  getUsageRecord(requestId: string): Promise<UsageRecord | null>;
  queryUsage(query: UsageQuery): Promise<UsageReport>;
  /** Most recent records first, for the dashboard. */
  recentUsage(query: { accountId?: string; limit: number }): Promise<UsageRecord[]>;
  /** Total tokens, or nanodollars for `usd`, recorded for the account (and key, when given) since `since` (ISO; omit for all time). */
  sumUsage(query: { accountId: string; keyId?: string | null; since?: string; unit: BudgetUnit }): Promise<number>;

  setBudget(budget: Budget): Promise<void>;
  /** Budgets that apply to a request by this key: the account-wide one and the key's own. */
  getBudgets(accountId: string, keyId: string | null): Promise<Budget[]>;
  listBudgets(accountId: string): Promise<Budget[]>;

  setRateLimit(limit: RateLimit): Promise<void>;
  /** The account's limit and the key's limit, those that exist. */
  getRateLimits(accountId: string, keyId: string | null): Promise<RateLimit[]>;

  /**
   * Claims the key for a new request: inserts the entry, or takes over one expired at `now`. Null
   * when claimed; otherwise the live entry that holds the key (running, or with its response). The
   * unique key (account, route, key) makes one claimant win across processes and instances.
   */
  claimIdempotencyKey(claim: IdempotencyHolder & { fingerprint: string; now: string; expiresAt: string }): Promise<IdempotencyEntry | null>;
  /** Moves a running claim's expiry; false when `token` no longer holds it. */
  renewIdempotencyKey(holder: IdempotencyHolder & { expiresAt: string }): Promise<boolean>;
  /** Stores the response on a running claim, kept until `expiresAt`; false when `token` no longer holds it. */
  completeIdempotencyKey(holder: IdempotencyHolder & { completionId: string; response: StoredResponse; expiresAt: string }): Promise<boolean>;
  /** Deletes a running claim so the key can be used again; false when `token` no longer holds it. */
  releaseIdempotencyKey(holder: IdempotencyHolder): Promise<boolean>;
  /** Deletes at most `limit` entries expired at `now`; returns how many. */
  purgeIdempotencyKeys(query: { now: string; limit: number }): Promise<number>;

  close(): Promise<void>;
}
