/** The dashboard's data: one load fetches totals, series, limits and recent requests in parallel. */
import { getJson, query, type Session } from './api.js';

export type Bucket = 'day' | 'hour';

export interface Totals {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
  estimated_requests: number;
  /** US dollars at the configured prices. */
  cost_usd: number;
  /** Requests that used a model without a price: not in `cost_usd`. */
  unpriced_requests: number;
}

export interface SeriesEntry {
  group: string | null;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** US dollars. */
  cost_usd: number;
}

export interface Series {
  bucket: Bucket;
  since: string;
  until: string;
  buckets: { start: string; requests: number; total_tokens: number; cost_usd: number; by_model: SeriesEntry[]; by_key: SeriesEntry[] }[];
}

export interface BudgetState {
  account_id: string;
  key_id: string | null;
  period: 'day' | 'month' | 'total';
  unit: 'tokens' | 'usd';
  /** The limit, for a token budget. */
  tokens?: number;
  /** The limit in US dollars, for a USD budget; `used` and `remaining` are dollars too. */
  usd?: number;
  used: number;
  remaining: number;
  resets_at: string | null;
}

export interface RateLimitState {
  account_id: string | null;
  key_id: string | null;
  rpm: number | null;
  tpm: number | null;
  requests_last_minute: number;
  tokens_last_minute: number;
}

export interface KeyInfo {
  id: string;
  name: string | null;
  prefix: string;
  revoked_at: string | null;
}

export interface Limits {
  budgets: BudgetState[];
  rate_limits: RateLimitState[];
  keys: KeyInfo[];
}

export interface RecentRecord {
  request_id: string;
  account_id: string;
  key_id: string | null;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cached_tokens: number | null;
  estimated: boolean;
  /** Nanodollars (10⁻⁹ USD); null when the model has no price. */
  cost_nano_usd: number | null;
  stream: boolean;
  outcome: string;
  status: number;
  error_code: string | null;
  latency_ms: number;
  ttft_ms: number | null;
  created_at: string;
}

export interface Account {
  id: string;
  name: string;
}

export interface DashboardData {
  totals: Totals;
  series: Series;
  limits: Limits;
  recent: RecentRecord[];
}

export async function listAccounts(session: Session): Promise<Account[]> {
  return (await getJson<{ data: Account[] }>('/admin/dashboard/accounts', session.key)).data;
}

/** `accountId` is used by the admin view only ('' = all accounts). */
export async function loadDashboard(session: Session, accountId: string, bucket: Bucket): Promise<DashboardData> {
  const admin = session.role === 'admin';
  const base = admin ? '/admin/dashboard' : '/v5/dashboard';
  const account = admin ? accountId : undefined;
  const series = await getJson<Series>(`${base}/series${query({ account_id: account, bucket })}`, session.key);
  const usagePath = admin ? '/admin/usage' : '/v5/usage';
  const [usage, limits, recent] = await Promise.all([
    getJson<{ totals: Totals }>(`${usagePath}${query({ account_id: account, since: series.since })}`, session.key),
    getJson<Limits>(`${base}/limits${query({ account_id: account })}`, session.key),
    getJson<{ data: RecentRecord[] }>(`${base}/recent${query({ account_id: account, limit: 50 })}`, session.key),
  ]);
  return { totals: usage.totals, series, limits, recent: recent.data };
}
