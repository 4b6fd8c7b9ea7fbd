/**
 * The model's score of a prompt (for echo with logprobs): every prompt token given the tokens
 * before it. The first token has no context, so its logprob and alternatives are null, as OpenAI
 * reports them.
 */
import { historyAfter, pushPromptToken } from './context-history.js';
import { logOf, scoredToken, topLogprobs, type ScoredToken } from './logprobs.js';
import type { LocalNgramModel } from './ngram-model.js';
import { tokenString, type LocalTokenTexts } from './token-text.js';
import type { LocalWorkspace } from './workspace.js';

/** Scores `tokens` (cl100k ids) with `count` alternatives each (0–5). */
export function promptLogprobs(
  model: LocalNgramModel,
  texts: LocalTokenTexts,
  workspace: LocalWorkspace,
  tokens: readonly number[],
  count: number,
): ScoredToken[] {
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
  return entries;
}
