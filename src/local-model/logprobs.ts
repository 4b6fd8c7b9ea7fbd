/**
 * Logprobs of the local model: always the model's own distribution, not the tempered, penalised or
 * biased one a token was drawn from. That is what OpenAI's legacy completions report, and it keeps
 * echo scores and best_of ranking independent of the sampling knobs.
 */
import { historyAfter, pushPromptToken } from './context-history.js';
import type { LocalRuntime } from './model-loader.js';
import type { LocalNgramModel } from './ngram-model.js';
import { type LocalTokenTexts, tokenString } from './token-text.js';
import type { LocalWorkspace } from './workspace.js';

/** One token's score as the legacy completions `logprobs` object spells it. */
export interface ScoredToken {
  /** The token's text (`bytes:\xNN…` for a byte fragment, the name of a special token). */
  token: string;
  /** Natural-log probability; null for the first prompt token, which has no context. */
  logprob: number | null;
  /** The most likely alternatives (plus the token itself); null for the first prompt token. */
  topLogprobs: Record<string, number> | null;
}

/** Reported for a token the model gives probability 0 (a prompt token it never saw); JSON has no −∞. */
export const IMPOSSIBLE_LOGPROB = -9999;

export function logOf(probability: number): number {
  return probability > 0 ? Math.log(probability) : IMPOSSIBLE_LOGPROB;
}

/** The `count` most likely tokens after `model.accumulate` (P = mass + β·unigram), most likely first, as token string → logprob. */
export function topLogprobs(model: LocalNgramModel, texts: LocalTokenTexts, workspace: LocalWorkspace, beta: number, count: number): Record<string, number> {
  if (count <= 0) return {};
  const bestTokens = new Int32Array(count).fill(-1);
  const bestProbabilities = new Float64Array(count).fill(-1);
  const offer = (token: number, probability: number): void => {
    if (probability <= bestProbabilities[count - 1]) return;
    let slot = count - 1;
    while (slot > 0 && bestProbabilities[slot - 1] < probability) {
      bestProbabilities[slot] = bestProbabilities[slot - 1];
      bestTokens[slot] = bestTokens[slot - 1];
      slot--;
    }
    bestProbabilities[slot] = probability;
    bestTokens[slot] = token;
  };
  const { touched, touchedCount, mass, stamps, currentStamp } = workspace;
  const unigram = model.unigram;
  for (let index = 0; index < touchedCount; index++) {
    const token = touched[index];
    offer(token, mass[token] + beta * unigram[token]);
  }
  // Untouched tokens rank by unigram alone, so the first `count` of them in unigram order suffice.
  const order = model.unigramOrder;
  for (let rank = 0, taken = 0; rank < order.length && taken < count; rank++) {
    const token = order[rank];
    if (stamps[token] === currentStamp) continue;
    offer(token, beta * unigram[token]);
    taken++;
  }
  const filled = bestTokens.indexOf(-1);
  return logprobRecord(texts, bestTokens, bestProbabilities, filled < 0 ? count : filled);
}

/** The first `count` of `tokens` / `probabilities` as token string → logprob. */
export function logprobRecord(texts: LocalTokenTexts, tokens: Int32Array, probabilities: Float64Array, count: number): Record<string, number> {
  const result: Record<string, number> = {};
  for (let index = 0; index < count; index++) result[texts.strings[tokens[index]]] = Math.log(probabilities[index]);
  return result;
}

/** The score of a generated token: top alternatives plus the token itself when missing. */
export function scoredToken(tokenText: string, logprob: number, top: Record<string, number>): ScoredToken {
  if (!(tokenText in top)) top[tokenText] = logprob;
  return { token: tokenText, logprob, topLogprobs: top };
}

/** Scores a prompt for echo: every token given those before it, with `count` alternatives; the first has no context (null). */
export function promptLogprobs({ model, texts, pool }: LocalRuntime, tokens: readonly number[], count: number): ScoredToken[] {
  const workspace = pool.acquire();
  const entries: ScoredToken[] = [];
  const history = historyAfter(model, []);
  const nodes = new Int32Array(model.order - 1);
  tokens.forEach((id, position) => {
    const text = tokenString(id);
    if (position === 0) entries.push({ token: text, logprob: null, topLogprobs: null });
    else {
      model.findNodes(history, nodes);
      const token = model.indexOf(id);
      let probability: number;
      let top: Record<string, number> = {};
      if (count > 0) {
        const beta = model.accumulate(nodes, workspace);
        top = topLogprobs(model, texts, workspace, beta, count);
        const sparse = token >= 0 && workspace.stamps[token] === workspace.currentStamp ? workspace.mass[token] : 0;
        probability = token >= 0 ? sparse + beta * model.unigram[token] : 0;
      } else {
        probability = token >= 0 ? model.probability(nodes, token) : 0;
      }
      entries.push(scoredToken(text, logOf(probability), top));
    }
    pushPromptToken(model, history, id);
  });
  pool.release(workspace);
  return entries;
}
