/** Row ↔ record mapping shared by the SQL backends (both use the same column names). */
import type { UsageGroup, UsageRecord, UsageTotals } from './types.js';

export interface UsageRow {
  request_id: string;
  account_id: string;
  key_id: string | null;
  model: string;
  vendor: string | null;
  prompt_tokens: number | string;
  completion_tokens: number | string;
  total_tokens: number | string;
  cached_tokens: number | string | null;
  reasoning_tokens: number | string | null;
  estimated: number | boolean;
  cost_nano_usd: number | string | null;
  stream: number | boolean;
  outcome: string;
  status: number;
  error_code: string | null;
  latency_ms: number | string;
  ttft_ms: number | string | null;
  created_at: string | Date;
}

/** The ledger's fields in column order; each column is its field's name in snake_case. */
export const usageFields = [
  'requestId',
  'accountId',
  'keyId',
  'model',
  'vendor',
  'promptTokens',
  'completionTokens',
  'totalTokens',
  'cachedTokens',
  'reasoningTokens',
  'estimated',
  'costNanoUsd',
  'stream',
  'outcome',
  'status',
  'errorCode',
  'latencyMs',
  'ttftMs',
  'createdAt',
] as const satisfies readonly (keyof UsageRecord)[];

export const usageColumns = usageFields.map((field) => field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`));

/** A NUL character, which PostgreSQL's text cannot hold (SQLite's can). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: it exists to find NUL characters
const nul = /\u0000/g;

export function usageValues(record: UsageRecord, booleanAsInteger: boolean): unknown[] {
  return usageFields.map((field) => {
    const value = record[field];
    if (typeof value === 'boolean') return booleanAsInteger ? (value ? 1 : 0) : value;
    // The model is the caller's text (an unknown model is recorded as asked): a NUL in it is stored
    // as U+FFFD on both backends, so the record is written everywhere and reads back the same.
    if (field === 'model' && record.model.includes('\u0000')) return record.model.replace(nul, '\uFFFD');
    return value;
  });
}

const nullableNumber = (value: number | string | null) => (value === null ? null : Number(value));

/** SQLite returns times as the stored ISO text, PostgreSQL as Dates. */
export function isoTime(value: string | Date): string {
  return value instanceof Date ? value.toISOString() : value;
}

export function rowToUsage(row: UsageRow): UsageRecord {
  return {
    requestId: row.request_id,
    accountId: row.account_id,
    keyId: row.key_id,
    model: row.model,
    vendor: row.vendor,
    promptTokens: Number(row.prompt_tokens),
    completionTokens: Number(row.completion_tokens),
    totalTokens: Number(row.total_tokens),
    cachedTokens: nullableNumber(row.cached_tokens),
    reasoningTokens: nullableNumber(row.reasoning_tokens),
    estimated: Boolean(row.estimated),
    costNanoUsd: nullableNumber(row.cost_nano_usd),
    stream: Boolean(row.stream),
    outcome: row.outcome as UsageRecord['outcome'],
    status: Number(row.status),
    errorCode: row.error_code,
    latencyMs: Number(row.latency_ms),
    ttftMs: nullableNumber(row.ttft_ms),
    createdAt: isoTime(row.created_at),
  };
}

/** The aggregate select list; both backends' SUMs come back as numbers or numeric strings. */
export const usageAggregateSelect = `COUNT(*) AS requests,
  COALESCE(SUM(prompt_tokens), 0) AS prompt_tokens,
  COALESCE(SUM(completion_tokens), 0) AS completion_tokens,
  COALESCE(SUM(total_tokens), 0) AS total_tokens,
  COALESCE(SUM(cached_tokens), 0) AS cached_tokens,
  COALESCE(SUM(reasoning_tokens), 0) AS reasoning_tokens,
  COALESCE(SUM(CASE WHEN estimated THEN 1 ELSE 0 END), 0) AS estimated_requests,
  COALESCE(SUM(cost_nano_usd), 0) AS cost_nano_usd,
  COALESCE(SUM(CASE WHEN cost_nano_usd IS NULL THEN 1 ELSE 0 END), 0) AS unpriced_requests`;

export interface AggregateRow {
  group_value?: string | null;
  requests: number | string;
  prompt_tokens: number | string;
  completion_tokens: number | string;
  total_tokens: number | string;
  cached_tokens: number | string;
  reasoning_tokens: number | string;
  estimated_requests: number | string;
  cost_nano_usd: number | string;
  unpriced_requests: number | string;
}

export function rowToTotals(row: AggregateRow): UsageTotals {
  return {
    requests: Number(row.requests),
    promptTokens: Number(row.prompt_tokens),
    completionTokens: Number(row.completion_tokens),
    totalTokens: Number(row.total_tokens),
    cachedTokens: Number(row.cached_tokens),
    reasoningTokens: Number(row.reasoning_tokens),
    estimatedRequests: Number(row.estimated_requests),
    costNanoUsd: Number(row.cost_nano_usd),
    unpricedRequests: Number(row.unpriced_requests),
  };
}

export function rowToGroup(row: AggregateRow): UsageGroup {
  return { group: row.group_value ?? null, ...rowToTotals(row) };
}
