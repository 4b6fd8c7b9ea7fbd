/**
 * The echoed prompt of a choice: its text, and with logprobs the model's score of every prompt
 * token given the tokens before it (the first token has no context: logprob and top null, as
 * OpenAI reports it). Prompts are conditioned as if they began a new document: after an
 * end-of-text token, the way every training address begins.
 */
import type { TokenLogprob } from '../types.js';
import { generatedTokenLogprob, logOf, topLogprobs } from './local-logprobs.js';
import { NO_TOKEN, type LocalNgramModel } from './local-ngram-model.js';
import { tokenString, type LocalTokenTexts } from './local-token-text.js';
import type { LocalWorkspace } from './local-workspace.js';

/** The context history after `tokens` (latest first), as the model's vocabulary indexes. */
export function historyAfter(model: LocalNgramModel, tokens: readonly number[]): Int32Array {
  const history = new Int32Array(model.order - 1).fill(NO_TOKEN);
  for (let back = 0; back < history.length; back++) {
    const position = tokens.length - 1 - back;
    if (position < -1) break;
    history[back] = position === -1 ? model.endOfText : model.indexOf(tokens[position]);
  }
  return history;
}

export function pushHistory(history: Int32Array, token: number): void {
  for (let back = history.length - 1; back > 0; back--) history[back] = history[back - 1];
  history[0] = token;
}

export function echoLogprobs(model: LocalNgramModel, texts: LocalTokenTexts, workspace: LocalWorkspace, tokens: readonly number[], count: number): TokenLogprob[] {
  const entries: TokenLogprob[] = [];
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
      entries.push(generatedTokenLogprob(text, logOf(probability), top));
    }
    pushHistory(history, model.indexOf(id));
  });
  return entries;
}
