/**
 * Versioned schema for PostgreSQL, mirroring sqlite-migrations.ts table for table and column for
 * column. Append only: a shipped migration is never edited.
 *
 * Type choices, and why:
 * - Times are TIMESTAMPTZ, so `since`/`until` compare as instants and day grouping can name the
 *   UTC day explicitly; JS ISO strings (ms precision, 'Z') round-trip exactly through them.
 * - Token counts and budgets are BIGINT (a busy account passes 2^31 tokens); the driver returns
 *   them as strings and the mappers convert.
 * - Text that queries sort or group by is COLLATE "C": SQLite compares bytes, and a database
 *   created with a linguistic locale would otherwise order models and ids differently.
 * - budgets.key_id keeps SQLite's '' for "account-wide" so the primary key covers both scopes.
 */
export const postgresMigrations: ReadonlyArray<{ version: number; sql: string }> = [
  {
    version: 1,
    sql: `
      CREATE TABLE accounts (
        id TEXT COLLATE "C" PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        created_at TIMESTAMPTZ NOT NULL
      );
      CREATE TABLE api_keys (
        id TEXT COLLATE "C" PRIMARY KEY,
        account_id TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
        name TEXT,
        prefix TEXT NOT NULL,
        secret_hash TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        revoked_at TIMESTAMPTZ
      );
      CREATE INDEX api_keys_account ON api_keys(account_id);
      CREATE TABLE usage_records (
        request_id TEXT COLLATE "C" PRIMARY KEY,
        account_id TEXT COLLATE "C" NOT NULL,
        key_id TEXT COLLATE "C",
        model TEXT COLLATE "C" NOT NULL,
        vendor TEXT,
        prompt_tokens BIGINT NOT NULL,
        completion_tokens BIGINT NOT NULL,
        total_tokens BIGINT NOT NULL,
        cached_tokens BIGINT,
        reasoning_tokens BIGINT,
        estimated BOOLEAN NOT NULL,
        stream BOOLEAN NOT NULL,
        outcome TEXT NOT NULL,
        status INTEGER NOT NULL,
        error_code TEXT,
        latency_ms DOUBLE PRECISION NOT NULL,
        ttft_ms DOUBLE PRECISION,
        created_at TIMESTAMPTZ NOT NULL
      );
      CREATE INDEX usage_account_time ON usage_records(account_id, created_at);
      CREATE TABLE budgets (
        account_id TEXT COLLATE "C" NOT NULL,
        key_id TEXT COLLATE "C" NOT NULL DEFAULT '',
        tokens BIGINT NOT NULL,
        period TEXT NOT NULL,
        PRIMARY KEY (account_id, key_id)
      );
      CREATE TABLE rate_limits (
        scope TEXT COLLATE "C" PRIMARY KEY,
        account_id TEXT COLLATE "C",
        key_id TEXT COLLATE "C",
        rpm INTEGER,
        tpm BIGINT
      );
    `,
  },
  {
    // As SQLite's version 2: cost in the ledger, budgets per unit.
    version: 2,
    sql: `
      ALTER TABLE usage_records ADD COLUMN cost_nano_usd BIGINT;
      UPDATE usage_records SET cost_nano_usd = 0 WHERE total_tokens = 0;
      ALTER TABLE budgets RENAME COLUMN tokens TO amount;
      ALTER TABLE budgets ADD COLUMN unit TEXT COLLATE "C" NOT NULL DEFAULT 'tokens';
      ALTER TABLE budgets ALTER COLUMN unit DROP DEFAULT;
      ALTER TABLE budgets DROP CONSTRAINT budgets_pkey;
      ALTER TABLE budgets ADD PRIMARY KEY (account_id, key_id, unit);
    `,
  },
  {
    version: 3,
    sql: `
      CREATE TABLE idempotency_keys (
        account_id TEXT COLLATE "C" NOT NULL,
        route TEXT COLLATE "C" NOT NULL,
        idempotency_key TEXT COLLATE "C" NOT NULL,
        fingerprint TEXT NOT NULL,
        claim_token TEXT NOT NULL,
        completion_id TEXT,
        status INTEGER,
        headers TEXT,
        body BYTEA,
        created_at TIMESTAMPTZ NOT NULL,
        expires_at TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (account_id, route, idempotency_key)
      );
      CREATE INDEX idempotency_keys_expiry ON idempotency_keys(expires_at);
    `,
  },
];
