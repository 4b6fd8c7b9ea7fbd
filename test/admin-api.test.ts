/** Admin endpoints behind TOLLGATE_ADMIN_KEY: any account's usage, accounts, keys, budgets, limits. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { get, post, startTestGateway, type TestGateway } from './support/test-gateway.js';

const ADMIN = 'admin-secret-for-tests-0042';
let gateway: TestGateway;
before(async () => {
  gateway = await startTestGateway({ TOLLGATE_ADMIN_KEY: ADMIN, TOLLGATE_POLICY_CACHE_MS: '60000' });
});
after(() => gateway.stop());

async function put(path: string, body: unknown, key = ADMIN) {
  const response = await fetch(`${gateway.url}${path}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
}

describe('admin API', () => {
  test('needs the admin key; an account key is not enough', async () => {
    assert.equal((await get(gateway, '/admin/accounts', { 'x-api-key': '' })).status, 401);
    assert.equal((await get(gateway, '/admin/accounts')).status, 401, 'an account key is refused');
    assert.equal((await get(gateway, '/admin/accounts', { 'x-api-key': `${ADMIN}x` })).status, 401);
    const ok = await get(gateway, '/admin/accounts', { 'x-api-key': '', authorization: `Bearer ${ADMIN}` });
    assert.equal(ok.status, 200);
  });

  test('creates accounts and keys, reads any account usage, sets budgets and limits that take effect at once', async () => {
    const account = await post(gateway, '/admin/accounts', { name: 'team-admin' }, { 'x-api-key': ADMIN });
    assert.equal(account.status, 201);
    const duplicate = await post(gateway, '/admin/accounts', { name: 'team-admin' }, { 'x-api-key': ADMIN });
    assert.equal(duplicate.status, 409);
    const key = await post(gateway, '/admin/keys', { account_id: account.body.id, name: 'svc' }, { 'x-api-key': ADMIN });
    assert.equal(key.status, 201);
    assert.match(key.body.key, /^tg_/);
    const completion = await post(gateway, '/v5/completions', { model: 'local/tollgate-small', prompt: 'Hello', max_tokens: 3 }, { 'x-api-key': key.body.key });
    assert.equal(completion.status, 200);

    const usage = await get(gateway, `/admin/usage?account_id=${account.body.id}&group_by=model`, { 'x-api-key': ADMIN });
    assert.equal(usage.status, 200);
    assert.equal(usage.body.totals.total_tokens, completion.body.usage.total_tokens);
    const everyone = await get(gateway, '/admin/usage', { 'x-api-key': ADMIN });
    assert.ok(everyone.body.totals.requests >= 1);

    const budget = await put('/admin/budgets', { account_id: account.body.id, tokens: 5, period: 'day' });
    assert.equal(budget.status, 200);
    const refused = await post(gateway, '/v5/completions', { model: 'local/tollgate-small', prompt: 'Hello', max_tokens: 3 }, { 'x-api-key': key.body.key });
    assert.equal(refused.status, 429, 'the admin change bypasses the policy cache');
    assert.equal(refused.body.error.code, 'insufficient_quota');

    const limits = await put('/admin/limits', { key_id: key.body.id, rpm: 1 });
    assert.equal(limits.status, 200);
    assert.equal(limits.body.rpm, 1);
  });

  test('bad admin input is a 400 naming the field', async () => {
    const response = await put('/admin/budgets', { account_id: 'acct_x', tokens: -1, period: 'day' });
    assert.equal(response.status, 400);
    assert.equal(response.body.error.param, 'tokens');
    const both = await put('/admin/limits', { account_id: 'a', key_id: 'b', rpm: 1 });
    assert.equal(both.status, 400);
    for (const body of [
      { account_id: 'acct_x', tokens: 5, usd: 1, period: 'day' },
      { account_id: 'acct_x', period: 'day' },
      { account_id: 'acct_x', usd: 0.0000000001, period: 'day' },
      { account_id: 'acct_x', usd: -1, period: 'day' },
      { account_id: 'acct_x', usd: 10_000_000_000, period: 'day' },
    ]) {
      const refused = await put('/admin/budgets', body);
      assert.equal(refused.status, 400, JSON.stringify(body));
      assert.match(refused.body.error.param, /^(tokens|usd)$/, JSON.stringify(refused.body));
    }
  });

  test('a USD budget is set in dollars and kept beside the token budget', async () => {
    const accountId = (await post(gateway, '/admin/accounts', { name: 'team-dollars' }, { 'x-api-key': ADMIN })).body.id;
    const usd = await put('/admin/budgets', { account_id: accountId, usd: 12.5, period: 'month' });
    assert.equal(usd.status, 200, JSON.stringify(usd.body));
    assert.deepEqual(usd.body, { object: 'budget', account_id: accountId, key_id: null, usd: 12.5, period: 'month' });
    const tokens = await put('/admin/budgets', { account_id: accountId, tokens: 1_000_000, period: 'day' });
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    assert.deepEqual(
      (await gateway.server.storage.listBudgets(accountId)).map((budget) => [budget.unit, budget.limit, budget.period]),
      [
        ['tokens', 1_000_000, 'day'],
        ['usd', 12_500_000_000, 'month'],
      ],
    );
  });

  test('a budget or limit for an account or key that does not exist, or a key of another account, is a 400 naming it', async () => {
    const other = await post(gateway, '/admin/accounts', { name: 'team-other' }, { 'x-api-key': ADMIN });
    const otherKey = await post(gateway, '/admin/keys', { account_id: other.body.id }, { 'x-api-key': ADMIN });
    for (const [path, body, param] of [
      ['/admin/budgets', { account_id: gateway.accountId, key_id: otherKey.body.id, tokens: 5, period: 'day' }, 'key_id'],
      ['/admin/budgets', { account_id: gateway.accountId, key_id: 'key_nosuchkey000', tokens: 5, period: 'day' }, 'key_id'],
      ['/admin/limits', { account_id: 'acct_nosuchaccount', rpm: 5 }, 'account_id'],
      ['/admin/limits', { key_id: 'key_nosuchkey000', rpm: 5 }, 'key_id'],
    ] as const) {
      const response = await put(path, body);
      assert.equal(response.status, 400, `${path} ${JSON.stringify(body)}`);
      assert.equal(response.body.error.param, param, JSON.stringify(response.body));
    }
    const own = await put('/admin/limits', { key_id: otherKey.body.id, tpm: 1000 });
    assert.equal(own.status, 200);
  });

  test("an unknown account's usage is a 400 naming account_id, not an empty report", async () => {
    const response = await get(gateway, '/admin/usage?account_id=acct_nosuchaccount', { 'x-api-key': ADMIN });
    assert.equal(response.status, 400);
    assert.equal(response.body.error.param, 'account_id');
    assert.equal(response.body.error.code, 'account_not_found');
  });

  test('account_id given twice is a 400 naming it, not a storage outage', async () => {
    const response = await get(gateway, `/admin/usage?account_id=${gateway.accountId}&account_id=${gateway.accountId}`, { 'x-api-key': ADMIN });
    assert.equal(response.status, 400, JSON.stringify(response.body));
    assert.equal(response.body.error.param, 'account_id');
  });

  test('without TOLLGATE_ADMIN_KEY the admin endpoints do not exist', async () => {
    const plain = await startTestGateway();
    try {
      const response = await get(plain, '/admin/accounts', { 'x-api-key': ADMIN });
      assert.equal(response.status, 404);
    } finally {
      await plain.stop();
    }
  });
});
