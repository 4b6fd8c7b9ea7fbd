/**
 * logit_bias in model terms: log P(w | context) + bias. An id the corpus never saw (most of
 * cl100k_base) has log P = −∞, which no bias lifts, so it is drawn as if it were the least likely
 * token the model knows after the context (step.ts) plus its bias: +100 forces it, a bias ≤ 0 changes
 * nothing. Its reported logprob stays the model's own (−∞). Sampler indexes: the vocabulary, then
 * vocabularySize + i for `outsideTokens[i]`.
 */
import type { LocalNgramModel } from './ngram-model.js';

/** Most ids outside the vocabulary that one request may lift (the API allows 1,024 logit_bias entries in all). */
export const MAX_OUTSIDE_TOKENS = 1024;

/** A request's logit_bias, resolved against the model. */
export interface LocalLogitBias {
  /** Sampler indexes with a non-zero bias (vocabulary indexes, then outside ones). */
  biasTokens: Int32Array;
  /** The bias of each entry of `biasTokens`, in logit units (−100 … 100). */
  biasValues: Float64Array;
  /** cl100k ids outside the vocabulary that a positive bias lifts; sampler index vocabularySize + i is entry i. */
  outsideTokens: Int32Array;
}

/** Resolves `bias` (cl100k id → bias) against the model; every id must be a cl100k token (the caller checks). */
export function resolveLogitBias(model: LocalNgramModel, bias: Iterable<readonly [number, number]>): LocalLogitBias {
  const biasTokens: number[] = [];
  const biasValues: number[] = [];
  const outsideTokens: number[] = [];
  for (const [id, value] of bias) {
    if (value === 0) continue;
    let index = model.indexOf(id);
    if (index < 0) {
      if (value < 0) continue;
      if (outsideTokens.length === MAX_OUTSIDE_TOKENS)
        throw new RangeError(`logit_bias lifts more than ${MAX_OUTSIDE_TOKENS} ids outside the model's vocabulary`);
      index = model.vocabularySize + outsideTokens.length;
      outsideTokens.push(id);
    }
    biasTokens.push(index);
    biasValues.push(value);
  }
  return { biasTokens: Int32Array.from(biasTokens), biasValues: Float64Array.from(biasValues), outsideTokens: Int32Array.from(outsideTokens) };
}
