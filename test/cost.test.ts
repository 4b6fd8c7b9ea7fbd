/**
 * Cost in US dollars through the whole gateway: each request priced at the configured price of the
 * model that answered, stored in the ledger, summed by /v5/usage (JSON and CSV) and the dashboard,
 * and USD budgets that reserve the most a request can cost and settle to what it did cost.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { generateKey } from '../src/auth/api-keys.js';
import { MockUpstream } from './support/mock-upstream.js';
import { get, parseSse, post, startTestGateway, type TestGateway } from './support/test-gateway.js';
import { fixture } from './support/vendor-fixtures.js';
import { anthropicMessages, openaiCompletions } from './support/vendor-wire.js';

const transport = { connectTimeoutMs: 1000, idleTimeoutMs: 1500, responseTimeoutMs: 2000, maxRetries: 0, retryBaseDelayMs: 5, retryMaxDelayMs: 20 };
const dir = mkdtempSync(join(tmpdir(), 'tollgate-cost-'));
let gateway: TestGateway;
let openai: MockUpstream;
let anthropic: MockUpstream;

// USD per million tokens. gpt-3.5-turbo-instruct: 1.5 in, 2 out, 0.75 cached in; every anthropic model: 3 in, 15 out,
// 0.3 for a cache read and 3.75 for a cache write.
const prices = {
  'openai/gpt-3.5-turbo-instruct': { prompt: 1.5, completion: 2, cachedPrompt: 0.75 },
  'anthropic/*': { prompt: 3, completion: 15, cachedPrompt: 0.3, cacheWritePrompt: 3.75 },
};
const INSTRUCT = 'openai/gpt-3.5-turbo-instruct';

before(async () => {
  openai = await MockUpstream.start();
  anthropic = await MockUpstream.start();
  const configPath = join(dir, 'tollgate.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      vendors: { openai: transport, anthropic: transport },
      aliases: { resilient: [INSTRUCT, 'anthropic/claude-sonnet-4-5'] },
      prices,
    }),
  );
  gateway = await startTestGateway({
    OPENAI_API_KEY: 'sk-upstream',
    OPENAI_BASE_URL: openai.url,
    ANTHROPIC_API_KEY: 'sk-upstream',
    ANTHROPIC_BASE_URL: anthropic.url,
    TOLLGATE_CONFIG: configPath,
    TOLLGATE_POLICY_CACHE_MS: '0',
  });
});
after(async () => {
  await gateway.stop();
  await openai.close();
  await anthropic.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  openai.reset();
  anthropic.reset();
});

async function freshAccount() {
  const account = await gateway.server.storage.createAccount(`cost-${Math.random().toString(36).slice(2)}`);
  const generated = generateKey();
  await gateway.server.storage.createKey({ id: generated.id, accountId: account.id, name: null, prefix: generated.prefix, secretHash: generated.secretHash });
  return { accountId: account.id, headers: { 'x-api-key': generated.key } };
}

async function costOf(completionId: string): Promise<number | null | undefined> {
  return (await gateway.server.storage.getUsageRecord(completionId))?.costNanoUsd;
}

describe('cost in the ledger', () => {
  test('priced at the model that answered, cached prompt tokens at their own price, exact to the nanodollar', async () => {
    const { headers } = await freshAccount();
    // 1,000 prompt tokens of which 400 cached, 250 completion tokens:
    // 600 × $1.5/M + 400 × $0.75/M + 250 × $2/M = $0.0009 + $0.0003 + $0.0005 = $0.0017.
    openai.reply(openaiCompletions.json({ texts: ['Hello'], usage: { prompt: 1000, completion: 250, cached: 400 } }));
    const whole = await post(gateway, '/v5/completions', { model: INSTRUCT, prompt: 'Say hi' }, headers);
    assert.equal(whole.status, 200, whole.text);
    assert.equal(await costOf(whole.body.id), 1_700_000);

    // Streamed, the same price: 7 × $1.5/M + 3 × $2/M = $0.0000165.
    openai.reply(openaiCompletions.stream({ texts: [['Hel', 'lo']], usage: { prompt: 7, completion: 3 } }));
    const streamed = await post(gateway, '/v5/completions', { model: INSTRUCT, prompt: 'Say hi', stream: true }, headers);
    assert.equal(streamed.status, 200, streamed.text);
    const id = JSON.parse(parseSse(streamed.text)[0].data).id;
    assert.equal(await costOf(id), 16_500);
  });

  test("Anthropic's cache reads and writes are each paid at their own price", async () => {
    const { headers } = await freshAccount();
    // 12 fresh input tokens, 40 read from the cache, 3 written to it; 9 output tokens.
    anthropic.reply(fixture('anthropic/stream-cache-usage.sse'));
    const response = await post(gateway, '/v5/completions', { model: 'anthropic/claude-sonnet-4-5', prompt: 'x', max_tokens: 20, stream: true }, headers);
    assert.equal(response.status, 200, response.text);
    const id = JSON.parse(parseSse(response.text)[0].data).id;
    // 12 × $3/M + 40 × $0.3/M + 3 × $3.75/M + 9 × $15/M = $0.00019425.
    assert.equal(await costOf(id), 194_250);
  });

  test('an alias is paid at the price of the model that answered', async () => {
    const { headers } = await freshAccount();
    openai.always(openaiCompletions.error(503, 'overloaded'));
    anthropic.always(anthropicMessages.json({ texts: ['Fallback'], usage: { prompt: 100, completion: 10 } }));
    const response = await post(gateway, '/v5/completions', { model: 'resilient', prompt: 'x', max_tokens: 10 }, headers);
    assert.equal(response.status, 200, response.text);
    // 100 × $3/M + 10 × $15/M = $0.00045, not the instruct model's price.
    assert.equal(await costOf(response.body.id), 450_000);
  });

  test('the built-in model is free; a model without a price is recorded without a cost and counted as unpriced', async () => {
    const { headers } = await freshAccount();
    const local = await post(gateway, '/v5/completions', { model: 'local/tollgate-small', prompt: 'The nation', max_tokens: 3 }, headers);
    assert.equal(local.status, 200, local.text);
    assert.equal(await costOf(local.body.id), 0);

    openai.reply(openaiCompletions.json({ texts: ['Hi'], usage: { prompt: 5, completion: 1 } }));
    const unpriced = await post(gateway, '/v5/completions', { model: 'openai/davinci-002', prompt: 'Say hi' }, headers);
    assert.equal(unpriced.status, 200, unpriced.text);
    assert.equal(await costOf(unpriced.body.id), null);

    // A refused request used nothing and cost nothing, priced or not.
    const refused = await post(gateway, '/v5/completions', { model: 'openai/davinci-002', prompt: 'x', max_tokens: -1 }, headers);
    assert.equal(refused.status, 400);
    const usage = await get(gateway, '/v5/usage', headers);
    assert.equal(usage.body.totals.requests, 3);
    assert.equal(usage.body.totals.unpriced_requests, 1);
    assert.equal(usage.body.totals.cost_usd, 0);
  });

  test('/v5/usage sums cost in dollars, per group, in JSON and as exact decimal text in CSV', async () => {
    const { headers } = await freshAccount();
    openai.always(openaiCompletions.json({ texts: ['Hi'], usage: { prompt: 1, completion: 1 } }));
    for (let index = 0; index < 3; index++) assert.equal((await post(gateway, '/v5/completions', { model: INSTRUCT, prompt: 'x' }, headers)).status, 200);
    anthropic.always(anthropicMessages.json({ texts: ['Hi'], usage: { prompt: 2_000_000, completion: 100_000 } }));
    assert.equal((await post(gateway, '/v5/completions', { model: 'anthropic/claude-sonnet-4-5', prompt: 'x', max_tokens: 10 }, headers)).status, 200);

    // 3 × (1 × $1.5/M + 1 × $2/M) = $0.0000105; 2M × $3/M + 100k × $15/M = $7.5.
    const json = await get(gateway, '/v5/usage?group_by=model', headers);
    assert.equal(json.status, 200, json.text);
    assert.deepEqual(
      json.body.data.map((group: Record<string, unknown>) => [group.model, group.cost_usd, group.unpriced_requests]),
      [
        ['anthropic/claude-sonnet-4-5', 7.5, 0],
        [INSTRUCT, 0.0000105, 0],
      ],
    );
    assert.equal(json.body.totals.cost_usd, 7.5000105);

    const csv = await get(gateway, '/v5/usage?group_by=model&format=csv', headers);
    const rows = csv.text.trim().split('\n');
    assert.equal(rows[0].split(',').at(-2), 'cost_usd');
    assert.equal(rows.at(-1)?.split(',').at(-2), '7.5000105');
  });
});

describe('USD budgets', () => {
  test('a request is refused when what it could cost is more than what is left, and a passed one settles to its cost', async () => {
    const { accountId, headers } = await freshAccount();
    // $0.001 a day. max_tokens 100 on the instruct model could cost prompt + 100 × $2/M = about $0.0002.
    await gateway.server.storage.setBudget({ accountId, keyId: null, unit: 'usd', limit: 1_000_000, period: 'day' });
    openai.always(openaiCompletions.json({ texts: ['Hi'], usage: { prompt: 10, completion: 5 } }));
    const passed = await post(gateway, '/v5/completions', { model: INSTRUCT, prompt: 'Say hi', max_tokens: 100 }, headers);
    assert.equal(passed.status, 200, passed.text);
    // 10 × $1.5/M + 5 × $2/M = $0.000025, and the dashboard's budget reads exactly that.
    const limits = await get(gateway, '/v5/dashboard/limits', headers);
    assert.deepEqual(
      limits.body.budgets.map((budget: Record<string, unknown>) => [budget.unit, budget.usd, budget.used, budget.remaining]),
      [['usd', 0.001, 0.000025, 0.000975]],
    );

    // 600 completion tokens could cost $0.0012, more than the whole budget: never passes.
    const never = await post(gateway, '/v5/completions', { model: INSTRUCT, prompt: 'Say hi', max_tokens: 600 }, headers);
    assert.equal(never.status, 429, never.text);
    assert.equal(never.body.error.code, 'insufficient_quota');
    assert.match(never.body.error.message, /could cost up to \$0\.0012\d*, more than the whole USD budget of \$0\.001\b/);
    assert.equal(openai.requests.length, 1, 'a refused request never reaches the vendor');

    // 490 tokens ($0.00098 + prompt) fits the budget but not what is left: retry when the day ends.
    const later = await post(gateway, '/v5/completions', { model: INSTRUCT, prompt: 'Say hi', max_tokens: 490 }, headers);
    assert.equal(later.status, 429, later.text);
    assert.match(later.body.error.message, /has \$0\.000975 of \$0\.001 left for this period/);
    assert.ok(Number(later.headers.get('retry-after')) >= 1);
  });

  test('a USD budget refuses a model without a price, naming it; the free built-in model passes', async () => {
    const { accountId, headers } = await freshAccount();
    await gateway.server.storage.setBudget({ accountId, keyId: null, unit: 'usd', limit: 1_000_000_000, period: 'month' });
    const refused = await post(gateway, '/v5/completions', { model: 'openai/davinci-002', prompt: 'x' }, headers);
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.error.code, 'model_not_priced');
    assert.equal(refused.body.error.param, 'model');
    assert.match(refused.body.error.message, /'openai\/davinci-002' has no price/);
    assert.equal(openai.requests.length, 0);

    const local = await post(gateway, '/v5/completions', { model: 'local/tollgate-small', prompt: 'The nation', max_tokens: 3 }, headers);
    assert.equal(local.status, 200, local.text);
  });

  test('emulated n bills the prompt once per call, and the reservation counts it so: the budget is not overshot', async () => {
    const { accountId, headers } = await freshAccount();
    await gateway.server.storage.setBudget({ accountId, keyId: null, unit: 'usd', limit: 5_000_000, period: 'day' });
    // About 1,000 prompt tokens, n = 4 on a chat-only vendor: 4 calls, each billing the prompt at $3/M,
    // so up to 4 × ($0.003 + 1 × $15/M) = about $0.012, more than the whole $0.005 budget.
    anthropic.always(anthropicMessages.json({ texts: ['Hi'], usage: { prompt: 1001, completion: 1 } }));
    const body = { model: 'anthropic/claude-sonnet-4-5', prompt: 'hello '.repeat(1000), max_tokens: 1, n: 4 };
    const response = await post(gateway, '/v5/completions', body, headers);
    assert.equal(response.status, 429, response.text);
    assert.match(response.body.error.message, /more than the whole USD budget of \$0\.005\b/);
    assert.equal(anthropic.requests.length, 0, 'a refused request never reaches the vendor');
  });

  test('a token budget and a USD budget both hold: the tighter one refuses', async () => {
    const { accountId, headers } = await freshAccount();
    await gateway.server.storage.setBudget({ accountId, keyId: null, unit: 'usd', limit: 1_000_000_000, period: 'month' });
    await gateway.server.storage.setBudget({ accountId, keyId: null, unit: 'tokens', limit: 50, period: 'day' });
    const refused = await post(gateway, '/v5/completions', { model: INSTRUCT, prompt: 'Say hi', max_tokens: 100 }, headers);
    assert.equal(refused.status, 429, refused.text);
    assert.match(refused.body.error.message, /tokens, more than the whole budget of 50 tokens/);
    const limits = await get(gateway, '/v5/dashboard/limits', headers);
    assert.deepEqual(limits.body.budgets.map((budget: Record<string, unknown>) => budget.unit).sort(), ['tokens', 'usd']);
  });
});
