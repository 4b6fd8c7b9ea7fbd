/** Budgets that never overshoot and rate limits with OpenAI's headers, through the real server. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateKey } from '../src/auth/api-keys.js';
import { post, startTestGateway, type TestGateway } from './support/test-gateway.js';

let gateway: TestGateway;
let model: string;
before(async () => {
  gateway = await startTestGateway({ TOLLGATE_POLICY_CACHE_MS: '0' });
  model = gateway.server.registry.listModels().find((m) => m.vendor === 'local')!.id;
});
after(() => gateway.stop());

async function freshAccount(name: string) {
  const account = await gateway.server.storage.createAccount(`${name}-${Math.random().toString(36).slice(2)}`);
  const generated = generateKey();
  await gateway.server.storage.createKey({ id: generated.id, accountId: account.id, name: null, prefix: generated.prefix, secretHash: generated.secretHash });
  return { accountId: account.id, key: generated.key, keyId: generated.id };
}

describe('budgets', () => {
  test('50 concurrent requests against a small budget overshoot it by 0 tokens', async () => {
    const { accountId, key } = await freshAccount('budget');
    const budget = 400;
    await gateway.server.storage.setBudget({ accountId, keyId: null, unit: 'tokens', limit: budget, period: 'day' });
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        post(
          gateway,
          '/v5/completions',
          { model, prompt: `Request number ${index} says`, max_tokens: 12, temperature: 1, stream: index % 2 === 0 },
          { 'x-api-key': key },
        ),
      ),
    );
    const ok = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 429);
    assert.equal(ok.length + refused.length, 50);
    assert.ok(ok.length > 0, 'some requests fit');
    assert.ok(refused.length > 0, 'some requests are refused');
    for (const response of refused) {
      assert.equal(response.body.error.code, 'insufficient_quota');
      assert.equal(response.body.error.type, 'insufficient_quota');
    }
    const used = await gateway.server.storage.sumUsage({ accountId, unit: 'tokens' });
    assert.ok(used <= budget, `used ${used} of ${budget}`);
  });

  test('a request that would exceed the budget gets 429 before any generation', async () => {
    const { accountId, key } = await freshAccount('tiny');
    await gateway.server.storage.setBudget({ accountId, keyId: null, unit: 'tokens', limit: 10, period: 'total' });
    const response = await post(gateway, '/v5/completions', { model, prompt: 'Hello there', max_tokens: 50 }, { 'x-api-key': key });
    assert.equal(response.status, 429);
    assert.equal(response.body.error.code, 'insufficient_quota');
    const [record] = await gateway.server.storage.recentUsage({ accountId, limit: 1 });
    assert.equal(record.outcome, 'rate_limited');
    assert.equal(record.totalTokens, 0);
  });

  test('a key budget applies to that key only', async () => {
    const { accountId, key, keyId } = await freshAccount('keyed');
    await gateway.server.storage.setBudget({ accountId, keyId, unit: 'tokens', limit: 5, period: 'month' });
    assert.equal((await post(gateway, '/v5/completions', { model, prompt: 'Hi', max_tokens: 10 }, { 'x-api-key': key })).status, 429);
    const other = generateKey();
    await gateway.server.storage.createKey({ id: other.id, accountId, name: null, prefix: other.prefix, secretHash: other.secretHash });
    assert.equal((await post(gateway, '/v5/completions', { model, prompt: 'Hi', max_tokens: 10 }, { 'x-api-key': other.key })).status, 200);
  });

  test('the reservation settles to the actual count', async () => {
    const { accountId, key } = await freshAccount('settle');
    await gateway.server.storage.setBudget({ accountId, keyId: null, unit: 'tokens', limit: 60, period: 'day' });
    // Each reserves 2 + 25 = 27 but uses 2 + 1; without settling the third would be refused.
    for (let i = 0; i < 5; i++) {
      const response = await post(gateway, '/v5/completions', { model, prompt: 'Hello', max_tokens: 25, logit_bias: { '100257': 100 } }, { 'x-api-key': key });
      assert.equal(response.status, 200, response.text);
    }
  });
});

describe('rate limits', () => {
  test('rpm R lets exactly R through, then 429 with retry-after and x-ratelimit headers', async () => {
    const { accountId, key } = await freshAccount('rpm');
    await gateway.server.storage.setRateLimit({ accountId, keyId: null, rpm: 7, tpm: null });
    const responses = await Promise.all(
      Array.from({ length: 12 }, () => post(gateway, '/v5/completions', { model, prompt: 'Hi', max_tokens: 1 }, { 'x-api-key': key })),
    );
    const ok = responses.filter((r) => r.status === 200);
    const limited = responses.filter((r) => r.status === 429);
    assert.equal(ok.length, 7);
    assert.equal(limited.length, 5);
    const sample = ok[0];
    assert.equal(sample.headers.get('x-ratelimit-limit-requests'), '7');
    assert.match(sample.headers.get('x-ratelimit-remaining-requests') ?? '', /^[0-6]$/);
    assert.match(sample.headers.get('x-ratelimit-reset-requests') ?? '', /^[0-9.]+s$/);
    for (const response of limited) {
      assert.equal(response.body.error.code, 'rate_limit_exceeded');
      // The bucket of 7 refills one request every 60/7 s: the retry is due within 9 s, not at a minute's end.
      const retryAfter = Number(response.headers.get('retry-after'));
      assert.ok(retryAfter >= 1 && retryAfter <= 9, `retry-after ${retryAfter}`);
      assert.equal(response.headers.get('x-should-retry'), 'true');
    }
  });

  test('a limit of 0 requests per minute refuses every request, saying it will not pass on retry', async () => {
    const { accountId, key } = await freshAccount('rpm0');
    await gateway.server.storage.setRateLimit({ accountId, keyId: null, rpm: 0, tpm: null });
    const response = await post(gateway, '/v5/completions', { model, prompt: 'Hi', max_tokens: 1 }, { 'x-api-key': key });
    assert.equal(response.status, 429);
    assert.equal(response.body.error.code, 'rate_limit_exceeded');
    assert.equal(response.headers.get('x-should-retry'), 'false');
    assert.equal(response.headers.get('retry-after'), null);
    assert.match(response.body.error.message, /0 requests per minute/);
  });

  test('tpm counts the most a request can use', async () => {
    const { key, keyId } = await freshAccount('tpm');
    await gateway.server.storage.setRateLimit({ accountId: null, keyId, rpm: null, tpm: 30 });
    const first = await post(gateway, '/v5/completions', { model, prompt: 'Hi', max_tokens: 20 }, { 'x-api-key': key });
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('x-ratelimit-limit-tokens'), '30');
    const second = await post(gateway, '/v5/completions', { model, prompt: 'Hi', max_tokens: 29 }, { 'x-api-key': key });
    assert.equal(second.status, 429);
    assert.equal(second.headers.get('x-should-retry'), 'true');
    // More than the whole limit can never pass: said so, and not worth a retry.
    const never = await post(gateway, '/v5/completions', { model, prompt: 'Hi', max_tokens: 100 }, { 'x-api-key': key });
    assert.equal(never.status, 429);
    assert.equal(never.headers.get('x-should-retry'), 'false');
    assert.match(never.body.error.message, /more than the limit of 30 tokens per minute/);
  });
});
