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
  /** The most the request can cost, in nanodollars (10⁻⁹ USD), at the dearest model it may be routed to. */
  maxCostNanoUsd: number;
  /** A model the request may be routed to that has no price (`vendor/model`), or null: a USD budget refuses it. */
  unpricedModel: string | null;
}

/** What a request used, to settle its reservation with. */
export interface ActualUse {
  tokens: number;
  /** Null when tokens were used on a model without a price. */
  costNanoUsd: number | null;
}

export interface AdmissionTicket {
  /** Rate-limit headers for the response (`x-ratelimit-*`). */
  headers: Record<string, string>;
  /** Replace the reservation with the actual usage. Idempotent; never throws. */
  settle(actual: ActualUse): Promise<void>;
}

export interface Admission {
  /** Throws a 429 GatewayError (`rate_limit_exceeded` or `insufficient_quota`) when the request may not run. */
  admit(request: AdmissionRequest): Promise<AdmissionTicket>;
  /** Forget cached budgets and limits (after an admin change in this process). */
  invalidatePolicies?(): void;
  close(): Promise<void>;
}
