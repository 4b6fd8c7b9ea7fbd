/** Prices as the config file writes them, and the integer arithmetic that makes a request's cost exact. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../src/config/config.js';
import { costPico, formatUsd, mostCostPico, picoToNano, PriceList, usdToNano } from '../src/config/prices.js';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-prices-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function configWith(prices: unknown) {
  const path = join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify({ prices }));
  return loadConfig({ TOLLGATE_CONFIG: path });
}

describe('prices', () => {
  test('a model finds its own price, else its vendor’s `vendor/*`, else none', () => {
    const list = new PriceList({ 'openai/gpt-4o': { prompt: 2.5, completion: 10 }, 'openai/*': { prompt: 1, completion: 1 } });
    assert.deepEqual(list.lookup('openai', 'gpt-4o'), { prompt: 2_500_000, completion: 10_000_000, cachedPrompt: 2_500_000, cacheWritePrompt: 2_500_000 });
    assert.deepEqual(list.lookup('openai', 'gpt-4o-mini'), { prompt: 1_000_000, completion: 1_000_000, cachedPrompt: 1_000_000, cacheWritePrompt: 1_000_000 });
    assert.equal(list.lookup('anthropic', 'gpt-4o'), null);
  });

  test('cost is exact where floating point is not: 0.1 + 0.2 of a dollar per million tokens, and sums past 2^53 picodollars', () => {
    const price = new PriceList({ 'v/m': { prompt: 0.1, completion: 0.2, cachedPrompt: 0.000001 } }).lookup('v', 'm')!;
    // 1M prompt + 1M completion tokens at $0.1/M and $0.2/M: exactly $0.3 (0.1 + 0.2 in doubles is 0.30000000000000004).
    assert.equal(picoToNano(costPico({ promptTokens: 1_000_000, completionTokens: 1_000_000 }, price)), 300_000_000);
    // Cached tokens are part of the prompt tokens, at their own price (here a millionth of a dollar per million).
    assert.equal(costPico({ promptTokens: 10, completionTokens: 0, cachedTokens: 4 }, price), 6n * 100_000n + 4n * 1n);
    // $1,000 per million tokens on 10M tokens: 10¹⁶ picodollars, past what a double holds exactly.
    const dear = new PriceList({ 'v/m': { prompt: 1000, completion: 1000 } }).lookup('v', 'm')!;
    assert.equal(costPico({ promptTokens: 10_000_001, completionTokens: 0 }, dear), 10_000_001_000_000_000n);
    // Rounded once per request, half up, to the ledger's nanodollars.
    assert.equal(picoToNano(499n), 0);
    assert.equal(picoToNano(500n), 1);
    assert.equal(picoToNano(1_499n), 1);
  });

  test('cache writes are priced apart; a reservation prices every prompt token at the dearest prompt rate', () => {
    // Anthropic's way: a cache write at 1.25× the prompt price, a cache read at 0.1×.
    const price = new PriceList({ 'v/m': { prompt: 3, completion: 15, cachedPrompt: 0.3, cacheWritePrompt: 3.75 } }).lookup('v', 'm')!;
    // 100 fresh + 200 read + 300 written prompt tokens, 10 completion tokens.
    const used = { promptTokens: 600, completionTokens: 10, cachedTokens: 200, cacheWriteTokens: 300 };
    assert.equal(costPico(used, price), 100n * 3_000_000n + 200n * 300_000n + 300n * 3_750_000n + 10n * 15_000_000n);
    assert.equal(mostCostPico({ promptTokens: 600, completionTokens: 10 }, price), 600n * 3_750_000n + 10n * 15_000_000n);
    assert.ok(mostCostPico({ promptTokens: 600, completionTokens: 10 }, price) >= costPico(used, price));
  });

  test('dollars as text and back', () => {
    assert.equal(formatUsd(0), '0');
    assert.equal(formatUsd(1_234_567), '0.001234567');
    assert.equal(formatUsd(2_000_000_000), '2');
    assert.equal(formatUsd(10_500_000_000), '10.5');
    assert.equal(formatUsd(9_007_199_254_740_991), '9007199.254740991');
    assert.equal(usdToNano(12.5), 12_500_000_000);
    assert.equal(usdToNano(0.000000001), 1);
    assert.throws(() => usdToNano(0.0000000001), /more than nine decimals/);
  });

  test('the config file: `prices` by vendor/model in USD per million tokens; a mistake names where it is', () => {
    const config = configWith({ 'openai/gpt-4o': { prompt: 2.5, completion: 10, cachedPrompt: 1.25 } });
    assert.deepEqual(config.prices.lookup('openai', 'gpt-4o'), {
      prompt: 2_500_000,
      completion: 10_000_000,
      cachedPrompt: 1_250_000,
      cacheWritePrompt: 2_500_000,
    });
    assert.equal(loadConfig({}).prices.lookup('openai', 'gpt-4o'), null);
    const refusals: [unknown, RegExp][] = [
      [{ 'gpt-4o': { prompt: 1, completion: 1 } }, /prices\.gpt-4o: .*vendor\/model/],
      [{ 'openai/gpt-4o': { prompt: -1, completion: 1 } }, /prices\.openai\/gpt-4o\.prompt/],
      [{ 'openai/gpt-4o': { prompt: 0.0000001, completion: 1 } }, /prices\.openai\/gpt-4o\.prompt: at most six decimals/],
      [{ 'openai/gpt-4o': { prompt: 1 } }, /prices\.openai\/gpt-4o\.completion/],
      [{ 'openai/gpt-4o': { prompt: 1, completion: 1, output: 3 } }, /prices\.openai\/gpt-4o/],
    ];
    for (const [prices, message] of refusals)
      assert.throws(
        () => configWith(prices),
        (error: Error) => error instanceof ConfigError && message.test(error.message),
      );
  });
});
