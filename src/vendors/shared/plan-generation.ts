/**
 * Decides, for one request on one vendor, how it is split into upstream calls and what the gateway
 * emulates: each prompt its own conversation where the vendor has no prompt lists (never one
 * multi-message chat), n parallel calls where it lacks `n`, gateway-enforced stops and echo where
 * it cannot take them, each call's seed within its seed range (seed-range.ts), and `max_tokens: 0`
 * answered without a call where it cannot (chat APIs want at least one token, or read 0 as "the
 * default"; planned-calls.ts).
 */
import type { GenerationRequest, PromptInput } from '../types.js';
import { seedInRange, type SeedRange } from './seed-range.js';

export interface VendorAbilities {
  /** One call can carry several prompts (native completions `prompt: [...]`). */
  promptList: boolean;
  /** One call can return n choices. */
  nativeN: boolean;
  /** The vendor echoes the prompt itself. */
  nativeEcho: boolean;
  /** Most stop sequences the vendor takes (0: none). */
  maxStops: number;
  /** Whether the vendor accepts this particular stop sequence. */
  acceptsStop?(stop: string): boolean;
  /** The seeds the vendor accepts; null when it has none (its plan refuses `seed` first). */
  seedRange: SeedRange | null;
  /** The vendor answers `max_tokens: 0` itself (native OpenAI completions). */
  zeroMaxTokens: boolean;
}

export interface CallGroup {
  /** Indexes into request.prompts this call carries. */
  promptIndexes: number[];
  /** Choices per prompt in this call. */
  n: number;
  /** Global index of the call's first choice. */
  choiceOffset: number;
  /** The seed this call sends, already within the vendor's range (varied per emulated choice); null when the client gave none. */
  seed: bigint | null;
}

export interface GenerationPlanDetail {
  groups: CallGroup[];
  /** Stops sent to the vendor. */
  vendorStops: string[];
  /** Stops the gateway enforces (empty: the vendor handles them). */
  gatewayStops: string[];
  /** The gateway prepends the prompt. */
  gatewayEcho: boolean;
  /** The gateway answers every choice empty without any upstream call (`max_tokens: 0`); `groups` is then empty. */
  emptyAnswer: boolean;
  /** Names of emulated parameters, for the `x-tollgate-emulated` header. */
  emulated: string[];
}

export function planGeneration(request: GenerationRequest, abilities: VendorAbilities): GenerationPlanDetail {
  const emulated: string[] = [];
  const promptCount = request.prompts.length;
  const uniformKinds = request.prompts.every((prompt) => prompt.kind === request.prompts[0]?.kind);
  if (request.maxTokens === 0 && !abilities.zeroMaxTokens) {
    // Nothing is generated, so no stop can match; the gateway echoes the prompt itself.
    return {
      groups: [],
      vendorStops: [],
      gatewayStops: [],
      gatewayEcho: request.echo,
      emptyAnswer: true,
      emulated: request.echo ? ['max_tokens', 'echo'] : ['max_tokens'],
    };
  }
  const seedFor = (replica: number): bigint | null =>
    request.seed === null || abilities.seedRange === null ? null : seedInRange(request.seed, replica, abilities.seedRange);
  const groups: CallGroup[] = [];
  if (abilities.nativeN && abilities.promptList && uniformKinds) {
    groups.push({ promptIndexes: request.prompts.map((_, index) => index), n: request.n, choiceOffset: 0, seed: seedFor(0) });
  } else if (abilities.nativeN) {
    const seed = seedFor(0);
    for (let prompt = 0; prompt < promptCount; prompt++) groups.push({ promptIndexes: [prompt], n: request.n, choiceOffset: prompt * request.n, seed });
  } else {
    const seeds = Array.from({ length: request.n }, (_, replica) => seedFor(replica));
    for (let prompt = 0; prompt < promptCount; prompt++) {
      for (let replica = 0; replica < request.n; replica++) {
        groups.push({ promptIndexes: [prompt], n: 1, choiceOffset: prompt * request.n + replica, seed: seeds[replica] });
      }
    }
  }
  if (promptCount > 1 && !(abilities.promptList && uniformKinds)) emulated.push('prompt');
  if (request.n > 1 && !abilities.nativeN) emulated.push('n');

  const stops = request.stop.filter((stop) => stop.length > 0);
  const accepted = stops.filter((stop) => abilities.acceptsStop?.(stop) ?? true);
  const vendorStops = accepted.length <= abilities.maxStops ? accepted : [];
  const gatewayStops = vendorStops.length === stops.length ? [] : stops;
  if (gatewayStops.length > 0) emulated.push('stop');

  const gatewayEcho = request.echo && !abilities.nativeEcho;
  if (gatewayEcho) emulated.push('echo');
  return { groups, vendorStops, gatewayStops, gatewayEcho, emptyAnswer: false, emulated };
}

/** The prompt's text; token prompts are refused in `prepare` wherever this is needed. */
export function promptText(prompt: PromptInput): string {
  return prompt.kind === 'text' ? prompt.text : '';
}
