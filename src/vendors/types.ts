/**
 * The adapter interface every vendor implements. Shared code (the completions pipeline, the
 * ledger, the HTTP edge) only ever sees these types; a vendor's wire format stays in its folder.
 */
import type { Price } from '../config/prices.js';
import type { GatewayError } from '../errors/gateway-error.js';

export type FinishReason = 'stop' | 'length' | 'content_filter';

/** Token counts as the vendor reported them (or as estimated; see `estimated` on the ledger). */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens served from the vendor's prompt cache, when reported. */
  cachedTokens?: number | null;
  /** Prompt tokens written to the vendor's prompt cache (billed above the prompt price by some vendors), when reported. */
  cacheWriteTokens?: number | null;
  /** Tokens the model spent reasoning (billed as completion tokens), when reported. */
  reasoningTokens?: number | null;
  audioPromptTokens?: number | null;
  audioCompletionTokens?: number | null;
  acceptedPredictionTokens?: number | null;
  rejectedPredictionTokens?: number | null;
  /** True when the adapter had to count some of these itself (e.g. a call it cut short at a stop sequence). */
  estimated?: boolean;
}

/** One token with its log probability, as the legacy completions `logprobs` object describes it. */
export interface TokenLogprob {
  /** The token's text (OpenAI spells non-UTF-8 fragments as `bytes:\xNN`). */
  token: string;
  /** Natural-log probability; null only for the first echoed prompt token. */
  logprob: number | null;
  /** Up to `logprobs` alternatives (plus the sampled token when it is not among them); null for the first echoed token. */
  topLogprobs: Record<string, number> | null;
}

/**
 * What an adapter yields. `choice` is the global choice index: prompt index × n + j.
 * Text deltas are exactly what the client sees (echo, stop handling already applied by the adapter,
 * usually through the helpers in `vendors/shared`). When a delta carries logprobs, the concatenated
 * `token` strings of those logprobs equal its `text`. Usage does not travel with the parts: see
 * `GenerationOptions.reportUsage`.
 */
export type StreamPart =
  | { type: 'text-delta'; choice: number; text: string; logprobs?: TokenLogprob[] }
  | { type: 'finish'; choice: number; finishReason: FinishReason }
  | { type: 'metadata'; systemFingerprint?: string | null };

/** One message of a conversation (`developer` messages arrive as `system`). */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
  /** The participant's name, for chat APIs that take one (OpenAI's); others have no such field. */
  name?: string;
}

/** A prompt is either text or a token array (token ids of the model's tokenizer). */
export type PromptInput = { kind: 'text'; text: string } | { kind: 'tokens'; tokens: number[] };

/** A validated, normalised legacy-completions request. Defaults already applied. */
export interface GenerationRequest {
  /** The model name after the `vendor/` prefix. */
  model: string;
  prompts: PromptInput[];
  /** Completions per prompt (1–128). */
  n: number;
  /** Candidates per prompt to generate and rank; null when not given. When set, ≥ n. */
  bestOf: number | null;
  /** Maximum completion tokens per choice (default 16). */
  maxTokens: number;
  temperature: number | null;
  topP: number | null;
  seed: number | null;
  /** 0–4 stop sequences. */
  stop: string[];
  presencePenalty: number | null;
  frequencyPenalty: number | null;
  /** Token id (as decimal string) → bias −100…100; null when not given. */
  logitBias: Record<string, number> | null;
  /** Number of top alternatives per token (0–5); null for no logprobs at all. */
  logprobs: number | null;
  echo: boolean;
  suffix: string | null;
  user: string | null;
  /** Whether the client asked for a stream; adapters may choose the upstream mode from it. */
  stream: boolean;
  /**
   * A conversation (POST /v5/chat/completions), or null for a text completion. When set, `prompts`
   * holds one text prompt, the conversation's transcript, which the gateway counts and which a
   * model without a chat endpoint (the built-in one) continues; echo, suffix and best_of are unset.
   */
  messages: ChatMessage[] | null;
}

export interface GenerationOptions<Plan extends GenerationPlan = GenerationPlan> {
  /** Aborted when the client disconnects or the gateway gives up; adapters must stop promptly. */
  signal: AbortSignal;
  /** The gateway's own request id, safe to forward upstream for tracing. */
  requestId: string;
  /**
   * What this adapter's `prepare` returned for this very request (the pipeline always passes it);
   * an adapter plans again only when it is absent (a direct caller). Passing it beats a side table
   * keyed by the request: a WeakMap entry kept every request alive until the next full GC.
   */
  plan?: Plan;
  /**
   * Receives what each upstream call (or each local generation) billed, once per call, however the
   * call ended: the vendor's own counts when it reported them; otherwise an estimate marked
   * `estimated`; zeros when the vendor refused the call before any output. The pipeline sums the
   * reports into the request's one ledger record: a call that does not report is billed nothing.
   */
  reportUsage: (usage: Usage) => void;
}

export interface ModelCapabilities {
  /** The model can produce `logprobs`. */
  logprobs: boolean;
  /** Native legacy completions endpoint (false: the vendor only has chat, completions are emulated). */
  nativeCompletions: boolean;
  /** The model answers conversations (POST /v5/chat/completions); false for completion-only models. */
  chat: boolean;
}

export interface ModelInfo {
  /** `vendor/name`, as clients write it. */
  id: string;
  vendor: string;
  name: string;
  /** Maximum prompt + completion tokens. */
  contextWindow: number;
  capabilities: ModelCapabilities;
  /** Counts tokens the way this model does (exact for the local model, an estimate elsewhere). */
  countTokens(text: string): number;
  /** Whether `countTokens` is the vendor's own tokenizer (false: usage estimates are approximate). */
  exactTokenizer: boolean;
  /** What the model costs when the gateway knows it without configuration (the built-in model is free); the config file's `prices` win. */
  price?: Price;
}

/** What `prepare` decided: which parameters the gateway will emulate for this request. */
export interface GenerationPlan {
  /** Names of emulated parameters for the `x-tollgate-emulated` header, e.g. `['n', 'stop']`. */
  emulated: string[];
}

export interface VendorAdapter<Plan extends GenerationPlan = GenerationPlan> {
  /** The `vendor` prefix in `vendor/name`. */
  readonly name: string;
  listModels(): ModelInfo[];
  /** Null when the vendor has no such model (the gateway answers 404 model_not_found). */
  resolveModel(name: string): ModelInfo | null;
  /**
   * Check the request against what this vendor can honour, before any upstream call.
   * Throws a GatewayError (400, `param` named, vendor named) for what cannot be honoured.
   */
  prepare(request: GenerationRequest, model: ModelInfo): Plan;
  /**
   * Generate. Parts come in batches, never empty: what one upstream read (or one slice of local
   * compute) produced, in order, so that every layer above pays one await per read, not per part.
   * Throws VendorError (before or after output) on upstream failure. Must stop and release the
   * upstream request when `options.signal` aborts.
   */
  stream(request: GenerationRequest, model: ModelInfo, options: GenerationOptions<Plan>): AsyncIterable<StreamPart[]>;
  /** Release pooled connections and timers. */
  close?(): Promise<void>;
}

export type { GatewayError };
