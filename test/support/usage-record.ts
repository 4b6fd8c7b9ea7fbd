/** A ledger record for storage tests: a small successful non-stream completion, with what a test looks at set in `fields`. */
import type { UsageRecord } from '../../src/storage/types.js';

export function usageRecord(fields: Pick<UsageRecord, 'requestId' | 'accountId'> & Partial<UsageRecord>): UsageRecord {
  return {
    keyId: null,
    model: 'openai/gpt-3.5-turbo-instruct',
    vendor: 'openai',
    promptTokens: 10,
    completionTokens: 5,
    totalTokens: 15,
    cachedTokens: null,
    reasoningTokens: null,
    estimated: false,
    costNanoUsd: 45_000,
    stream: false,
    outcome: 'success',
    status: 200,
    errorCode: null,
    latencyMs: 1,
    ttftMs: null,
    createdAt: new Date().toISOString(),
    ...fields,
  };
}
