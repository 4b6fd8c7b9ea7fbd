/** Versioned schema for SQLite. Append only: a shipped migration is never edited. */
export const sqliteMigrations: ReadonlyArray<{ version: number; sql: string }> = [
  {
    version: 1,
    sql: `
      CREATE TABLE accounts (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL
      );
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        name TEXT,
        prefix TEXT NOT NULL,
        secret_hash TEXT NOT NULL,
        created_at TEXT NOT NULL,
        revoked_at TEXT
      );
      CREATE INDEX api_keys_account ON api_keys(account_id);
      CREATE TABLE usage_records (
        request_id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        key_id TEXT,
        model TEXT NOT NULL,
        vendor TEXT,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        total_tokens INTEGER NOT NULL,
        cached_tokens INTEGER,
        reasoning_tokens INTEGER,
        estimated INTEGER NOT NULL,
        stream INTEGER NOT NULL,
        outcome TEXT NOT NULL,
        status INTEGER NOT NULL,
        error_code TEXT,
        latency_ms REAL NOT NULL,
        ttft_ms REAL,
        created_at TEXT NOT NULL
      );
      CREATE INDEX usage_account_time ON usage_records(account_id, created_at);
      CREATE TABLE budgets (
        account_id TEXT NOT NULL,
        key_id TEXT NOT NULL DEFAULT '',
        tokens INTEGER NOT NULL,
        period TEXT NOT NULL,
        PRIMARY KEY (account_id, key_id)
      );
      CREATE TABLE rate_limits (
        scope TEXT PRIMARY KEY,
        account_id TEXT,
        key_id TEXT,
        rpm INTEGER,
        tpm INTEGER
      );
    `,
  },
  {
    // Cost in the ledger (nanodollars; NULL where tokens were used on a model without a price,
    // which is every earlier record that used any), and budgets per unit: an account or key may
    // have a token budget and a USD budget at once.
    version: 2,
    sql: `
      ALTER TABLE usage_records ADD COLUMN cost_nano_usd INTEGER;
      UPDATE usage_records SET cost_nano_usd = 0 WHERE total_tokens = 0;
      CREATE TABLE budgets_by_unit (
        account_id TEXT NOT NULL,
        key_id TEXT NOT NULL DEFAULT '',
        unit TEXT NOT NULL,
        amount INTEGER NOT NULL,
        period TEXT NOT NULL,
        PRIMARY KEY (account_id, key_id, unit)
      );
      INSERT INTO budgets_by_unit (account_id, key_id, unit, amount, period) SELECT account_id, key_id, 'tokens', tokens, period FROM budgets;
      DROP TABLE budgets;
      ALTER TABLE budgets_by_unit RENAME TO budgets;
    `,
  },
  {
    version: 3,
    sql: `
      CREATE TABLE idempotency_keys (
        account_id TEXT NOT NULL,
        route TEXT NOT NULL,
        idempotency_key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        claim_token TEXT NOT NULL,
        completion_id TEXT,
        status INTEGER,
        headers TEXT,
        body BLOB,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        PRIMARY KEY (account_id, route, idempotency_key)
      );
      CREATE INDEX idempotency_keys_expiry ON idempotency_keys(expires_at);
    `,
  },
];
