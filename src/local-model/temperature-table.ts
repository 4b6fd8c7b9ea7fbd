/**
 * The dense unigram part of a step, raised to 1/temperature, precomputed once per temperature.
 * Every token the context never saw has probability β·unigram[w], so its tempered weight is
 * (β·unigramMax)^(1/T) · (unigram[w]/unigramMax)^(1/T): the second factor is this table, the first
 * one number per step. Relative to the maximum, so small temperatures underflow only where the
 * weight is negligible anyway.
 */
import type { LocalNgramModel } from './ngram-model.js';

export interface LocalTemperatureTable {
  inverseTemperature: number;
  /** The model's largest unigram probability (the scale the weights are relative to). */
  unigramMax: number;
  /** (unigram[w] / unigramMax)^(1/T), by vocabulary index. */
  weights: Float64Array;
  /** Running sums of `weights`, for sampling by binary search. */
  cumulative: Float64Array;
  total: number;
}

const KEEP = 16;
const tablesByModel = new WeakMap<LocalNgramModel, Map<number, LocalTemperatureTable>>();

export function temperatureTable(model: LocalNgramModel, inverseTemperature: number): LocalTemperatureTable {
  let tables = tablesByModel.get(model);
  if (!tables) {
    tables = new Map();
    tablesByModel.set(model, tables);
  }
  const cached = tables.get(inverseTemperature);
  if (cached) {
    // Map order is insertion order: re-inserting makes this the most recently used.
    tables.delete(inverseTemperature);
    tables.set(inverseTemperature, cached);
    return cached;
  }
  const unigram = model.unigram;
  const unigramMax = unigram[model.unigramOrder[0]];
  const weights = new Float64Array(unigram.length);
  const cumulative = new Float64Array(unigram.length);
  let total = 0;
  for (let token = 0; token < unigram.length; token++) {
    const ratio = unigram[token] / unigramMax;
    weights[token] = inverseTemperature === 1 ? ratio : ratio ** inverseTemperature;
    cumulative[token] = total += weights[token];
  }
  const table = { inverseTemperature, unigramMax, weights, cumulative, total };
  tables.set(inverseTemperature, table);
  if (tables.size > KEEP) tables.delete(tables.keys().next().value as number);
  return table;
}
