/**
 * One routed model for a request: the adapter and model it resolved to, the request as that
 * vendor gets it, the vendor's plan and the context-window check. An alias has several targets,
 * tried in order until one answers.
 */
import type { Caller } from '../auth/authenticate.js';
import type { AdmissionRequest } from '../usage/admission.js';
import type { ResolvedModel, VendorRegistry } from '../vendors/registry.js';
import type { GenerationPlan, GenerationRequest } from '../vendors/types.js';
import { checkContextWindow, type ContextCheck } from './check-context-window.js';
import type { ParsedCompletionRequest } from './parse-completion-request.js';

export interface CompletionTarget {
  resolved: ResolvedModel;
  request: GenerationRequest;
  plan: GenerationPlan;
  context: ContextCheck;
}

/** Resolves `model` and lets its adapter check and plan the request (throws 400/404 GatewayErrors). */
export function prepareTarget(registry: VendorRegistry, model: string, parsed: ParsedCompletionRequest): CompletionTarget {
  const resolved = registry.resolve(model);
  const request: GenerationRequest = { model: resolved.model.name, ...parsed.generation };
  const context = checkContextWindow(request, resolved.model);
  const plan = resolved.adapter.prepare(request, resolved.model);
  return { resolved, request, plan, context };
}

/** The ids a request's log lines carry. */
export interface RunIds {
  /** The completion's id (`cmpl-…`): the response's `id` and the ledger record's key. */
  completionId: string;
  /** The `x-request-id` the client received. */
  requestId: string;
}

/**
 * What admission reads. The token counts are getters over the context check, so the prompt is
 * tokenized only if admission reads them (a budget or token limit applies).
 */
export class AdmissionAsk implements AdmissionRequest {
  readonly requestId: string;
  readonly completionId: string;
  readonly accountId: string;
  readonly keyId: string | null;
  private readonly context: ContextCheck;

  constructor(ids: RunIds, caller: Caller, context: ContextCheck) {
    this.requestId = ids.requestId;
    this.completionId = ids.completionId;
    this.accountId = caller.account.id;
    this.keyId = caller.keyId;
    this.context = context;
  }

  get maxTokens(): number {
    return this.context.maxTotal;
  }

  get promptTokens(): number {
    return this.context.promptTokens;
  }
}
