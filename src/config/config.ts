/**
 * The only reader of process.env and of the config file. Parsed once at start, frozen, and handed
 * down in slices. Secrets (vendor keys, the admin key) live here and are never logged.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

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
  /** pino level (LOG_LEVEL, default info). */
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
  /**
   * V8's old-generation growing factor as a percentage over 1 (60 → 1.6×), applied at `serve`;
   * 0 leaves V8's own (up to 4×). See src/server/heap-policy.ts.
   */
  heapGrowingPercent: number;
  /**
   * Whether V8 splits young-generation GCs across helper threads (TOLLGATE_PARALLEL_SCAVENGE:
   * `auto`, the default, turns them off when the process has one core; `on`; `off`). See
   * src/server/heap-policy.ts.
   */
  parallelScavenge: 'auto' | 'on' | 'off';
  /**
   * Whether V8 recompiles hot WebAssembly (undici's HTTP parser) with its optimising compiler
   * (TOLLGATE_WASM_TIER_UP: `off`, the default, keeps the baseline code; `on`). See
   * src/server/heap-policy.ts.
   */
  wasmTierUp: boolean;
  /** Allowed CORS origins; empty = CORS off. */
  corsOrigins: string[];
  /** Per-vendor options from the config file, keyed by vendor name; each adapter validates its own slice. */
  vendors: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /** Model aliases: `alias` → ordered list of `vendor/name` targets (the first that works answers). */
  aliases: Readonly<Record<string, readonly string[]>>;
  /** Vendor credentials and endpoints from the environment: `*_API_KEY`, `*_BASE_URL`, `*_API_VERSION`. */
  vendorEnv: Readonly<Record<string, string>>;
}

const fileSchema = z
  .object({
    vendors: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
    aliases: z.record(z.string(), z.union([z.string(), z.array(z.string()).min(1)])).optional(),
    bodyLimitBytes: z.number().int().positive().optional(),
    keepAliveIntervalMs: z.number().int().positive().optional(),
    shutdownGraceMs: z.number().int().nonnegative().optional(),
    corsOrigins: z.array(z.string()).optional(),
  })
  .strict();

export class ConfigError extends Error {}

const vendorEnvPattern = /_(API_KEY|BASE_URL|API_VERSION)$/;

/** Reads the environment (and TOLLGATE_CONFIG, when set) once, and returns a frozen Config. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const file = env.TOLLGATE_CONFIG ? readConfigFile(env.TOLLGATE_CONFIG) : {};
  const port = parsePort(env.PORT);
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
    port,
    databaseUrl: env.DATABASE_URL || 'sqlite:./data/tollgate.db',
    redisUrl: env.REDIS_URL || null,
    adminKey: env.TOLLGATE_ADMIN_KEY || null,
    logLevel: env.LOG_LEVEL || 'info',
    bodyLimitBytes: file.bodyLimitBytes ?? 4 * 1024 * 1024,
    keepAliveIntervalMs: parsePositive(env.TOLLGATE_KEEPALIVE_MS, 'TOLLGATE_KEEPALIVE_MS') ?? file.keepAliveIntervalMs ?? 15_000,
    shutdownGraceMs: parsePositive(env.TOLLGATE_SHUTDOWN_GRACE_MS, 'TOLLGATE_SHUTDOWN_GRACE_MS') ?? file.shutdownGraceMs ?? 30_000,
    headersTimeoutMs: parsePositive(env.TOLLGATE_HEADERS_TIMEOUT_MS, 'TOLLGATE_HEADERS_TIMEOUT_MS') ?? 20_000,
    policyCacheMs:
      env.TOLLGATE_POLICY_CACHE_MS !== undefined && env.TOLLGATE_POLICY_CACHE_MS !== ''
        ? parseNonNegative(env.TOLLGATE_POLICY_CACHE_MS, 'TOLLGATE_POLICY_CACHE_MS')
        : 1000,
    keyCacheMs:
      env.TOLLGATE_KEY_CACHE_MS !== undefined && env.TOLLGATE_KEY_CACHE_MS !== '' ? parseNonNegative(env.TOLLGATE_KEY_CACHE_MS, 'TOLLGATE_KEY_CACHE_MS') : 1000,
    heapGrowingPercent:
      env.TOLLGATE_HEAP_GROWING_PERCENT !== undefined && env.TOLLGATE_HEAP_GROWING_PERCENT !== ''
        ? parseWholePercent(env.TOLLGATE_HEAP_GROWING_PERCENT, 'TOLLGATE_HEAP_GROWING_PERCENT')
        : 60,
    parallelScavenge: parseChoice(env.TOLLGATE_PARALLEL_SCAVENGE, 'TOLLGATE_PARALLEL_SCAVENGE', ['auto', 'on', 'off'] as const, 'auto'),
    wasmTierUp: parseChoice(env.TOLLGATE_WASM_TIER_UP, 'TOLLGATE_WASM_TIER_UP', ['on', 'off'] as const, 'off') === 'on',
    corsOrigins: env.TOLLGATE_CORS_ORIGINS
      ? env.TOLLGATE_CORS_ORIGINS.split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : (file.corsOrigins ?? []),
    vendors: deepFreeze(file.vendors ?? {}),
    aliases: Object.freeze(aliases),
    vendorEnv: Object.freeze(vendorEnv),
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
    throw new ConfigError(`TOLLGATE_CONFIG: ${path}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return parsed.data;
}

function parsePort(value: string | undefined): number {
  if (value === undefined || value === '') return 8080;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`PORT must be an integer 0–65535, got '${value}'`);
  return port;
}

function parsePositive(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0) throw new ConfigError(`${name} must be a positive number, got '${value}'`);
  return number;
}

function parseNonNegative(value: string, name: string): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number < 0) throw new ConfigError(`${name} must be a non-negative number, got '${value}'`);
  return number;
}

function parseWholePercent(value: string, name: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0 || number > 1000) throw new ConfigError(`${name} must be a whole number 0–1000, got '${value}'`);
  return number;
}

/** One of a fixed set of words (case and spaces ignored); unset or empty gives `fallback`. */
function parseChoice<T extends string>(value: string | undefined, name: string, choices: readonly T[], fallback: T): T {
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
