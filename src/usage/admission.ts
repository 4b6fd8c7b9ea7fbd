/**
 * Admission: rate limits and budget reservations, checked before any upstream call.
 * A request reserves the most it can use and settles to the actual count at the end, so
 * concurrent requests cannot overshoot a budget.
 */
import type { RequestLogIds } from '../observability/logger.js';

/** Its ids go on the log lines about this request. */
export interface AdmissionRequest extends RequestLogIds {
  accountId: string;
  keyId: string | null;
  /** The most tokens the request can use: prompt + max_tokens × choices. */
  maxTokens: number;
  /** Prompt tokens (for tokens-per-minute accounting). */
  promptTokens: number;
}

export interface AdmissionTicket {
  /** Rate-limit headers for the response (`x-ratelimit-*`). */
  headers: Record<string, string>;
  /** Replace the reservation with the actual usage. Idempotent; never throws. */
  settle(actualTokens: number): Promise<void>;
}

export interface Admission {
  /** Throws a 429 GatewayError (`rate_limit_exceeded` or `insufficient_quota`) when the request may not run. */
  admit(request: AdmissionRequest): Promise<AdmissionTicket>;
  /** Forget cached budgets and limits (after an admin change in this process). */
  invalidatePolicies?(): void;
  close(): Promise<void>;
}
