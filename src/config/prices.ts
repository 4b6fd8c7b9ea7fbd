/**
 * Prices per `vendor/model`, from the config file's `prices` map, in US dollars per million tokens
 * as vendors publish them. Kept as whole picodollars per token (10⁻¹² USD), so a request's cost is
 * integer arithmetic, exact to the last digit a price is written with (at most six decimals).
 */
import { z } from 'zod';

/** Picodollars per token. */
export interface Price {
  prompt: number;
  completion: number;
  /** Prompt tokens served from the vendor's prompt cache (part of the prompt tokens). */
  cachedPrompt: number;
  /** Prompt tokens written to the vendor's prompt cache (part of the prompt tokens). */
  cacheWritePrompt: number;
}

/** The built-in model's price. */
export const FREE: Price = Object.freeze({ prompt: 0, completion: 0, cachedPrompt: 0, cacheWritePrompt: 0 });

/** A price as the config file writes it: USD per million tokens, at most six decimals. */
const perMillion = z
  .number()
  .nonnegative()
  .max(1_000_000)
  .refine((usd) => Math.abs(usd * 1e6 - Math.round(usd * 1e6)) < 1e-6, { error: 'at most six decimals (USD per million tokens)' });

export const priceFileSchema = z.strictObject({
  prompt: perMillion,
  completion: perMillion,
  cachedPrompt: perMillion.optional(),
  cacheWritePrompt: perMillion.optional(),
});

/** `vendor/model`, or `vendor/*` for every model of the vendor without its own entry. */
export const priceKeySchema = z.string().regex(/^[^/\s]+\/\S+$/, { error: 'a price is keyed by vendor/model or vendor/*' });

export type PriceFileEntry = z.infer<typeof priceFileSchema>;

export class PriceList {
  private readonly prices: ReadonlyMap<string, Price>;

  constructor(entries: Readonly<Record<string, PriceFileEntry>>) {
    this.prices = new Map(Object.entries(entries).map(([model, entry]) => [model, toPrice(entry)]));
  }

  /** The configured price of `vendor/model`, else its vendor's `vendor/*`, else null. */
  lookup(vendor: string, model: string): Price | null {
    return this.prices.get(`${vendor}/${model}`) ?? this.prices.get(`${vendor}/*`) ?? null;
  }
}

function toPrice(entry: PriceFileEntry): Price {
  const pico = (usdPerMillion: number) => Math.round(usdPerMillion * 1e6);
  return Object.freeze({
    prompt: pico(entry.prompt),
    completion: pico(entry.completion),
    cachedPrompt: pico(entry.cachedPrompt ?? entry.prompt),
    cacheWritePrompt: pico(entry.cacheWritePrompt ?? entry.prompt),
  });
}

/** Token counts as a price applies to them; cache reads and writes are part of the prompt tokens. */
export interface PricedTokens {
  promptTokens: number;
  completionTokens: number;
  cachedTokens?: number | null;
  cacheWriteTokens?: number | null;
}

/** What `tokens` cost at `price`, in picodollars (exact: BigInt, as a busy request passes 2⁵³). */
export function costPico(tokens: PricedTokens, price: Price): bigint {
  const cached = Math.min(tokens.cachedTokens ?? 0, tokens.promptTokens);
  const written = Math.min(tokens.cacheWriteTokens ?? 0, tokens.promptTokens - cached);
  return (
    BigInt(tokens.promptTokens - cached - written) * BigInt(price.prompt) +
    BigInt(cached) * BigInt(price.cachedPrompt) +
    BigInt(written) * BigInt(price.cacheWritePrompt) +
    BigInt(tokens.completionTokens) * BigInt(price.completion)
  );
}

/** The most `tokens` can cost before the vendor says which prompt tokens hit or filled its cache: every prompt token at the dearest prompt rate. */
export function mostCostPico(tokens: { promptTokens: number; completionTokens: number }, price: Price): bigint {
  const prompt = Math.max(price.prompt, price.cachedPrompt, price.cacheWritePrompt);
  return BigInt(tokens.promptTokens) * BigInt(prompt) + BigInt(tokens.completionTokens) * BigInt(price.completion);
}

/** Picodollars as whole nanodollars (10⁻⁹ USD, the ledger's unit), rounded half up. */
export function picoToNano(pico: bigint): number {
  return Number((pico + 500n) / 1000n);
}

/** Nanodollars as a decimal USD text with no trailing zeros: 1234567 → "0.001234567", 2e9 → "2". */
export function formatUsd(nano: number): string {
  const sign = nano < 0 ? '-' : '';
  const whole = Math.floor(Math.abs(nano) / 1e9);
  const fraction = String(Math.abs(nano) % 1e9)
    .padStart(9, '0')
    .replace(/0+$/, '');
  return `${sign}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** The largest USD amount the ledger holds exactly: 2⁵³ nanodollars, about $9 million. */
export const MAX_EXACT_USD = 9_000_000;

/** USD as a whole number of nanodollars; throws on more than nine decimals. */
export function usdToNano(usd: number): number {
  const nano = Math.round(usd * 1e9);
  if (Math.abs(usd * 1e9 - nano) > 1e-3) throw new RangeError(`${usd} has more than nine decimals`);
  return nano;
}
