/** The ledger record the ledger-rate scripts insert: a 20-token completion, as the matrix's requests are. */
import type { UsageRecord } from '../src/storage/types.js';

export function sampleUsageRecord(requestId: string, accountId: string, keyId: string | null, stream: boolean): UsageRecord {
  return {
    requestId,
    accountId,
    keyId,
    model: 'openai/gpt-3.5-turbo-instruct',
    vendor: 'openai',
    promptTokens: 8,
    completionTokens: 20,
    totalTokens: 28,
    cachedTokens: null,
    reasoningTokens: null,
    estimated: false,
    costNanoUsd: 37_500,
    stream,
    outcome: 'success',
    status: 200,
    errorCode: null,
    latencyMs: 1.5,
    ttftMs: 0.8,
    createdAt: new Date().toISOString(),
  };
}
