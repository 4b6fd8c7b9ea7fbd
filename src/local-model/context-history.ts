/**
 * The context the model conditions on: the last `order − 1` tokens, latest first, as vocabulary
 * indexes. A prompt starts a new document, as every training address does after an end-of-text
 * token; an end-of-text token inside a prompt is such a boundary too.
 */
import { END_OF_TEXT_TOKEN } from '../tokenizer/tokenizer.js';
import { NO_TOKEN, type LocalNgramModel } from './ngram-model.js';

/** The context history after `tokens` (cl100k ids), latest first, as the model's vocabulary indexes. */
export function historyAfter(model: LocalNgramModel, tokens: readonly number[]): Int32Array {
  const history = new Int32Array(model.order - 1).fill(NO_TOKEN);
  for (let back = 0; back < history.length; back++) {
    const position = tokens.length - 1 - back;
    if (position === -1 || tokens[position] === END_OF_TEXT_TOKEN) {
      history[back] = model.endOfText;
      break;
    }
    history[back] = model.indexOf(tokens[position]);
  }
  return history;
}

/** Appends a vocabulary index (or NO_TOKEN) as the latest token of `history`. */
export function pushHistory(history: Int32Array, token: number): void {
  for (let back = history.length - 1; back > 0; back--) history[back] = history[back - 1];
  history[0] = token;
}

/** Appends a prompt token (a cl100k id): after end-of-text, only the boundary itself remains. */
export function pushPromptToken(model: LocalNgramModel, history: Int32Array, id: number): void {
  if (id === END_OF_TEXT_TOKEN) {
    history.fill(NO_TOKEN);
    history[0] = model.endOfText;
  } else pushHistory(history, model.indexOf(id));
}
