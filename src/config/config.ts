/**
 * The only reader of process.env and of the config file. Parsed once at start, frozen, and handed
 * down in slices. Secrets (vendor keys, the admin key) live here and are never logged.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { PriceList, priceFileSchema, priceKeySchema } from './prices.js';

export interface Config {
  /** Address to listen on (HOST, default 127.0.0.1). */
  host: string;
  /** Port to listen on (PORT, default 8080; 0 = any free port). */
  port: number;
  /** `sqlite:PATH` or `postgres://…` (DATABASE_URL, default sqlite:./data/tollgate.db). */
  databaseUrl: string;
  /** Shared limit/budget state across instances (REDIS_URL), unset for in-process state. */
  redisUrl: string | null;
  /** Key for admin endpoints (TOLLGATE_ADMIN_KEY); admin endpoints are off without it. */
  adminKey: string | null;
  /** pino level (LOG_LEVEL, default info; one of `logLevels`). */
  logLevel: string;
  /** Largest request body accepted, in bytes (default 4 MiB). */
  bodyLimitBytes: number;
  /** Keep-alive comment interval on silent streams, in ms (default 15000). */
  keepAliveIntervalMs: number;
  /** How long SIGTERM waits for in-flight requests, in ms (default 30000). */
  shutdownGraceMs: number;
  /** A client must finish its request headers within this, ms (TOLLGATE_HEADERS_TIMEOUT_MS, default 20000; slowloris bound). */
  headersTimeoutMs: number;
  /** How long budgets and rate limits read from storage are reused, ms (TOLLGATE_POLICY_CACHE_MS, default 1000). */
  policyCacheMs: number;
  /** How long a validated API key is reused before storage is asked again, ms (TOLLGATE_KEY_CACHE_MS, default 1000; 0 = every request). */
  keyCacheMs: number;
  /** V8's old-generation growing factor over 1, percent (TOLLGATE_HEAP_GROWING_PERCENT, default 60 → 1.6×; 0 = V8's own). See src/server/heap-policy.ts. */
  heapGrowingPercent: number;
  /** Whether young-generation GCs use helper threads (TOLLGATE_PARALLEL_SCAVENGE, default `auto`: not on one core). */
  parallelScavenge: 'auto' | 'on' | 'off';
  /** Whether V8 optimises hot WebAssembly, undici's HTTP parser (TOLLGATE_WASM_TIER_UP, default off). */
  wasmTierUp: boolean;
  /** Allowed CORS origins; empty = CORS off. */
  corsOrigins: string[];
  /** Per-vendor options from the config file, keyed by vendor name; each adapter validates its own slice. */
  vendors: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /** Model aliases: `alias` → ordered list of `vendor/name` targets (the first that works answers). */
  aliases: Readonly<Record<string, readonly string[]>>;
  /** Vendor credentials and endpoints from the environment: `*_API_KEY`, `*_BASE_URL`, `*_API_VERSION`. */
  vendorEnv: Readonly<Record<string, string>>;
  /** Prices per `vendor/model` (or `vendor/*`) from the config file's `prices`, for cost in the ledger and USD budgets. */
  prices: PriceList;
}

const fileSchema = z
  .object({
    vendors: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
    aliases: z.record(z.string(), z.union([z.string(), z.array(z.string()).min(1)])).optional(),
    bodyLimitBytes: z.number().int().positive().optional(),
    keepAliveIntervalMs: z.number().int().positive().optional(),
    shutdownGraceMs: z.number().int().nonnegative().optional(),
    corsOrigins: z.array(z.string()).optional(),
    prices: z.record(priceKeySchema, priceFileSchema).optional(),
  })
  .strict();

export class ConfigError extends Error {}

/** The levels LOG_LEVEL accepts: pino's, most severe first, and `silent`. */
const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const vendorEnvPattern = /_(API_KEY|BASE_URL|API_VERSION)$/;

/** Reads the environment (and TOLLGATE_CONFIG, when set) once, and returns a frozen Config. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const file = env.TOLLGATE_CONFIG ? readConfigFile(env.TOLLGATE_CONFIG) : {};
  const vendorEnv: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && value !== '' && vendorEnvPattern.test(key)) vendorEnv[key] = value;
  }
  const aliases: Record<string, readonly string[]> = {};
  for (const [alias, targets] of Object.entries(file.aliases ?? {})) {
    aliases[alias] = Object.freeze(typeof targets === 'string' ? [targets] : [...targets]);
  }
  const config: Config = {
    host: env.HOST || '127.0.0.1',
    port: envNumber(env, 'PORT', 'port', 8080),
    databaseUrl: env.DATABASE_URL || 'sqlite:./data/tollgate.db',
    redisUrl: env.REDIS_URL || null,
    adminKey: env.TOLLGATE_ADMIN_KEY || null,
    logLevel: envChoice(env, 'LOG_LEVEL', logLevels, 'info'),
    bodyLimitBytes: file.bodyLimitBytes ?? 4 * 1024 * 1024,
    keepAliveIntervalMs: envNumber(env, 'TOLLGATE_KEEPALIVE_MS', 'positive', file.keepAliveIntervalMs ?? 15_000),
    shutdownGraceMs: envNumber(env, 'TOLLGATE_SHUTDOWN_GRACE_MS', 'positive', file.shutdownGraceMs ?? 30_000),
    headersTimeoutMs: envNumber(env, 'TOLLGATE_HEADERS_TIMEOUT_MS', 'positive', 20_000),
    policyCacheMs: envNumber(env, 'TOLLGATE_POLICY_CACHE_MS', 'nonNegative', 1000),
    keyCacheMs: envNumber(env, 'TOLLGATE_KEY_CACHE_MS', 'nonNegative', 1000),
    heapGrowingPercent: envNumber(env, 'TOLLGATE_HEAP_GROWING_PERCENT', 'percent', 60),
    parallelScavenge: envChoice(env, 'TOLLGATE_PARALLEL_SCAVENGE', ['auto', 'on', 'off'] as const, 'auto'),
    wasmTierUp: envChoice(env, 'TOLLGATE_WASM_TIER_UP', ['on', 'off'] as const, 'off') === 'on',
    corsOrigins: env.TOLLGATE_CORS_ORIGINS
      ? env.TOLLGATE_CORS_ORIGINS.split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : (file.corsOrigins ?? []),
    vendors: deepFreeze(file.vendors ?? {}),
    aliases: Object.freeze(aliases),
    vendorEnv: Object.freeze(vendorEnv),
    prices: new PriceList(file.prices ?? {}),
  };
  return Object.freeze(config);
}

function readConfigFile(path: string): z.infer<typeof fileSchema> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`TOLLGATE_CONFIG: cannot read ${path}: ${(error as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new ConfigError(`TOLLGATE_CONFIG: ${path} is not valid ${path.endsWith('.json') ? 'JSON' : 'YAML'}: ${(error as Error).message}`);
  }
  const parsed = fileSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    // A map key that breaks its rule: say the rule, not zod's "Invalid key in record".
    const message = issue.code === 'invalid_key' ? (issue.issues[0]?.message ?? issue.message) : issue.message;
    throw new ConfigError(`TOLLGATE_CONFIG: ${path}: ${issue.path.join('.') || '(root)'}: ${message}`);
  }
  return parsed.data;
}

/** What each kind of number accepts, and how an error names it. */
const numberRules = {
  port: { valid: (value: number) => Number.isInteger(value) && value >= 0 && value <= 65535, says: 'an integer 0–65535' },
  positive: { valid: (value: number) => Number.isFinite(value) && value > 0, says: 'a positive number' },
  nonNegative: { valid: (value: number) => Number.isFinite(value) && value >= 0, says: 'a non-negative number' },
  percent: { valid: (value: number) => Number.isInteger(value) && value >= 0 && value <= 1000, says: 'a whole number 0–1000' },
};

/** A number from the environment; unset or empty gives `fallback`. */
function envNumber(env: NodeJS.ProcessEnv, name: string, kind: keyof typeof numberRules, fallback: number): number {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  const number = Number(value);
  if (!numberRules[kind].valid(number)) throw new ConfigError(`${name} must be ${numberRules[kind].says}, got '${value}'`);
  return number;
}

/** One of a fixed set of words (case and spaces ignored); unset or empty gives `fallback`. */
function envChoice<T extends string>(env: NodeJS.ProcessEnv, name: string, choices: readonly T[], fallback: T): T {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  const setting = value.trim().toLowerCase();
  if ((choices as readonly string[]).includes(setting)) return setting as T;
  const listed = choices.length === 2 ? choices.join(' or ') : `${choices.slice(0, -1).join(', ')} or ${choices[choices.length - 1]}`;
  throw new ConfigError(`${name} must be ${listed}, got '${value}'`);
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
