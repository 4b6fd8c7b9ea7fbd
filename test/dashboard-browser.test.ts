/**
 * The dashboard and playground end to end: a real gateway with real requests in its ledger, the
 * built UI (dist/ui) served by the gateway, driven in Debian's chromium through playwright-core.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Fastify from 'fastify';
import { chromium, type Browser, type Page } from 'playwright-core';
import { generateKey } from '../src/auth/api-keys.js';
import { loadConfig } from '../src/config/config.js';
import { registerDashboardRoutes } from '../src/http/dashboard-routes.js';
import { defaultUiDir } from '../src/http/dashboard-static.js';
import type { UsageTotals } from '../src/storage/types.js';
import { get, post, startTestGateway, type TestGateway } from './support/test-gateway.js';
import { usageRecord } from './support/usage-record.js';

/** What ui/src/dashboard.ts exposes for debugging, as far as these tests read it. */
declare global {
  interface Window {
    tollgate?: { charts: Record<'model' | 'key', { data: { datasets: { label?: string; data: unknown[] }[] } }>; data: { series: { since: string } } | null };
  }
}

const chromiumPath = '/usr/bin/chromium';
const haveChromium = existsSync(chromiumPath);
const ADMIN_KEY = 'admin-key-for-dashboard-tests';
// Playwright gives every launch a fresh temporary profile, so no --user-data-dir is needed.
const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

test('chromium is available where the browser tests must run', {
  skip: haveChromium || process.env.CI ? false : 'no /usr/bin/chromium (set CI to make this fail)',
}, () => {
  assert.ok(haveChromium, `${chromiumPath} is missing; the dashboard browser tests cannot run`);
});

describe('dashboard and playground in a browser', { skip: !haveChromium && 'no /usr/bin/chromium' }, () => {
  let gateway: TestGateway;
  let browser: Browser;
  let model: string;
  let otherAccountId: string;
  let secondKeyId: string;

  const newKey = async (accountId: string, name: string) => {
    const generated = generateKey();
    await gateway.server.storage.createKey({ id: generated.id, accountId, name, prefix: generated.prefix, secretHash: generated.secretHash });
    return generated;
  };
  const admin = { 'x-api-key': ADMIN_KEY, 'content-type': 'application/json' };
  const put = (path: string, body: unknown) => fetch(`${gateway.url}${path}`, { method: 'PUT', headers: admin, body: JSON.stringify(body) });

  before(async () => {
    assert.ok(existsSync(join(defaultUiDir(), 'index.html')), 'dist/ui is not built: run `npx vite build --config ui/vite.config.ts`');
    gateway = await startTestGateway({ TOLLGATE_ADMIN_KEY: ADMIN_KEY });
    model = gateway.server.registry.listModels().find((entry) => entry.vendor === 'local')!.id;
    const second = await newKey(gateway.accountId, 'batch jobs');
    secondKeyId = second.id;
    const other = await gateway.server.storage.createAccount('Second team');
    otherAccountId = other.id;
    const otherKey = await newKey(other.id, 'team key');
    for (let index = 0; index < 3; index++)
      assert.equal((await post(gateway, '/v5/completions', { model, prompt: 'The economy', max_tokens: 6 + index })).status, 200);
    assert.equal((await post(gateway, '/v5/completions', { model, prompt: 'Our nation', max_tokens: 12, stream: true })).status, 200);
    assert.equal((await post(gateway, '/v5/completions', { model, prompt: 'Taxes', max_tokens: 9 }, { 'x-api-key': second.key })).status, 200);
    assert.equal((await post(gateway, '/v5/completions', { model, prompt: 'x', temperature: 5 })).status, 400);
    assert.equal((await post(gateway, '/v5/completions', { model, prompt: 'Peace', max_tokens: 7 }, { 'x-api-key': otherKey.key })).status, 200);
    assert.equal((await put('/admin/budgets', { account_id: gateway.accountId, tokens: 100_000, period: 'month' })).status, 200);
    assert.equal((await put('/admin/budgets', { account_id: gateway.accountId, usd: 25, period: 'month' })).status, 200);
    // A vendor's priced request, as the ledger holds it: $0.0025 on a model of its own.
    await gateway.server.storage.recordUsage(
      usageRecord({
        requestId: 'cmpl-priced',
        accountId: gateway.accountId,
        keyId: secondKeyId,
        model: 'openai/gpt-4o',
        costNanoUsd: 2_500_000,
        createdAt: new Date().toISOString(),
      }),
    );
    assert.equal((await put('/admin/limits', { account_id: gateway.accountId, rpm: 600, tpm: 50_000 })).status, 200);
    browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
  });
  after(async () => {
    await browser?.close();
    await gateway?.stop();
  });

  const openPage = async (path: string): Promise<Page> => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) problems.push(message.text());
    });
    (page as Page & { problems: string[] }).problems = problems;
    await page.goto(`${gateway.url}${path}`);
    return page;
  };
  const signIn = async (page: Page, key: string) => {
    await page.fill('#api-key', key);
    await page.click('#sign-in button[type=submit]');
  };
  const waitForLoads = (page: Page, count: number) => page.waitForFunction((n) => Number(document.getElementById('app')!.dataset.loaded ?? 0) >= n, count);
  const shownTotals = (page: Page) =>
    page.$$eval('#totals [data-field]', (cells) =>
      Object.fromEntries(cells.map((cell) => [(cell as HTMLElement).dataset.field!, Number(cell.textContent!.replace(/[$,]/g, ''))])),
    );
  const expectTotals = (shown: Record<string, number>, ledger: UsageTotals) =>
    assert.deepEqual(shown, {
      requests: ledger.requests,
      prompt_tokens: ledger.promptTokens,
      completion_tokens: ledger.completionTokens,
      total_tokens: ledger.totalTokens,
      cached_tokens: ledger.cachedTokens,
      estimated_requests: ledger.estimatedRequests,
      // The built-in model is free: these accounts' requests cost $0.
      cost_usd: ledger.costNanoUsd / 1e9,
    });
  const chartSums = (page: Page, chart: 'model' | 'key') =>
    page.evaluate(
      (name) =>
        Object.fromEntries(
          window.tollgate!.charts[name].data.datasets.map((dataset) => [dataset.label, (dataset.data as number[]).reduce((a, b) => a + b, 0)]),
        ),
      chart,
    );
  const inkedPixels = (page: Page, selector: string) =>
    page.$eval(selector, (canvas) => {
      const element = canvas as HTMLCanvasElement;
      const pixels = element.getContext('2d')!.getImageData(0, 0, element.width, element.height).data;
      let inked = 0;
      for (let index = 3; index < pixels.length; index += 4) if (pixels[index] > 0) inked++;
      return inked;
    });

  test('static files: redirect, content types, cache headers, 404 shape, no traversal', async () => {
    const redirect = await fetch(`${gateway.url}/dashboard?x=1`, { redirect: 'manual' });
    assert.equal(redirect.status, 301);
    assert.equal(redirect.headers.get('location'), '/dashboard/?x=1');
    const page = await fetch(`${gateway.url}/dashboard/`);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(page.headers.get('cache-control'), 'no-cache');
    assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'self'/);
    const html = await page.text();
    const script = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(html)![1];
    const asset = await fetch(`${gateway.url}${script}`);
    assert.equal(asset.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(asset.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    const playground = await fetch(`${gateway.url}/playground/`);
    assert.match(await playground.text(), /playground-template/);
    const missing = await get(gateway, '/dashboard/assets/nope.js');
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body.error, {
      message: "No file '/dashboard/assets/nope.js' in the dashboard.",
      type: 'not_found_error',
      param: null,
      code: 'file_not_found',
    });
    for (const path of [
      '/dashboard/..%2f..%2fpackage.json',
      '/dashboard/%2e%2e/%2e%2e/package.json',
      '/dashboard/../../package.json',
      '/playground/..%5c..%5cpackage.json',
    ]) {
      const status = await new Promise<number>((resolve, reject) => {
        const url = new URL(gateway.url);
        httpRequest({ host: url.hostname, port: url.port, path, method: 'GET' }, (response) => {
          response.resume();
          resolve(response.statusCode!);
        })
          .on('error', reject)
          .end();
      });
      assert.equal(status, 404, path);
    }
  });

  test('without a built UI the pages explain how to build it', async () => {
    const emptyDir = mkdtempSync(join(tmpdir(), 'tollgate-noui-'));
    const app = Fastify();
    registerDashboardRoutes(app, { storage: gateway.server.storage, config: loadConfig({}), uiDir: emptyDir });
    const response = await app.inject({ method: 'GET', url: '/dashboard/' });
    assert.equal(response.statusCode, 503);
    assert.match(response.headers['content-type'] as string, /^text\/html/);
    assert.match(response.body, /has not been built.*npm run build/s);
    assert.equal((await app.inject({ method: 'GET', url: '/admin/dashboard/accounts' })).statusCode, 404, 'no admin key, no admin endpoints');
    await app.close();
    rmSync(emptyDir, { recursive: true, force: true });
  });

  test('dashboard API: own account only, limits with use, series matching the ledger', async () => {
    const recent = await get(gateway, '/v5/dashboard/recent?limit=50');
    assert.equal(recent.status, 200);
    assert.ok(recent.body.data.length >= 6);
    assert.ok(recent.body.data.every((record: { account_id: string }) => record.account_id === gateway.accountId));
    assert.equal((await get(gateway, `/v5/dashboard/recent?account_id=${otherAccountId}`)).body.error.code, 'account_mismatch');
    assert.equal((await get(gateway, '/v5/dashboard/recent?limit=0')).body.error.param, 'limit');
    assert.equal((await get(gateway, '/v5/dashboard/series?bogus=1')).body.error.code, 'unknown_parameter');
    const used = await gateway.server.storage.sumUsage({
      accountId: gateway.accountId,
      unit: 'tokens',
      since: new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1)).toISOString(),
    });
    const limits = await get(gateway, '/v5/dashboard/limits');
    assert.deepEqual(
      limits.body.budgets.map((budget: Record<string, unknown>) => [budget.unit, budget.tokens ?? budget.usd, budget.used, budget.remaining]),
      [
        ['tokens', 100_000, used, 100_000 - used],
        // The built-in model is free: the USD budget holds the priced request alone.
        ['usd', 25, 0.0025, 24.9975],
      ],
    );
    assert.equal(limits.body.rate_limits[0].rpm, 600);
    assert.ok(limits.body.rate_limits[0].requests_last_minute >= 6);
    const series = await get(gateway, '/v5/dashboard/series?bucket=hour');
    assert.equal(series.body.buckets.length, 24);
    const ledger = await gateway.server.storage.queryUsage({ accountId: gateway.accountId, since: series.body.since });
    assert.equal(
      series.body.buckets.reduce((sum: number, bucket: { total_tokens: number }) => sum + bucket.total_tokens, 0),
      ledger.totals.totalTokens,
    );
    assert.equal((await get(gateway, '/admin/dashboard/accounts')).status, 401);
    const accounts = await get(gateway, '/admin/dashboard/accounts', { 'x-api-key': ADMIN_KEY });
    assert.equal(accounts.body.data.length, 2);
  });

  test('signing in with an API key shows that account: charts drawn from the ledger, totals equal to it', async () => {
    const page = await openPage('/dashboard/');
    await signIn(page, gateway.key);
    await waitForLoads(page, 1);
    assert.equal(await page.textContent('#session-label'), 'default');
    const since = await page.evaluate(() => window.tollgate!.data!.series.since);
    const ledger = await gateway.server.storage.queryUsage({ accountId: gateway.accountId, since, groupBy: 'model' });
    expectTotals(await shownTotals(page), ledger.totals);
    const byModel = Object.fromEntries(ledger.groups.map((group) => [group.group || '(no model)', group.totalTokens]));
    assert.deepEqual(await chartSums(page, 'model'), byModel);
    const byKey = await chartSums(page, 'key');
    assert.equal(Object.keys(byKey).length, 2);
    assert.equal(
      byKey[Object.keys(byKey).find((label) => label.startsWith('batch jobs'))!],
      (await gateway.server.storage.recentUsage({ accountId: gateway.accountId, limit: 100 }))
        .filter((record) => record.keyId === secondKeyId)
        .reduce((sum, record) => sum + record.totalTokens, 0),
    );
    await page.waitForTimeout(300); // the bars grow in for 250 ms
    assert.ok((await inkedPixels(page, '#chart-model')) > 2000, 'the model chart is drawn');
    assert.ok((await inkedPixels(page, '#chart-key')) > 2000, 'the key chart is drawn');
    const records = await gateway.server.storage.recentUsage({ accountId: gateway.accountId, limit: 50 });
    assert.equal(await page.locator('#recent-table tbody tr').count(), records.length);
    assert.match((await page.textContent('#recent-table tbody tr:has-text("400")'))!, /invalid_request/);
    assert.match((await page.textContent('#budgets-table'))!, /100,000/);
    assert.match((await page.textContent('#budgets-table'))!, /\$25\.00.*\$0\.0025.*\$25\.00/s);
    assert.match((await page.textContent('#rate-limits-table'))!, /600/);
    await page.selectOption('#metric-picker', 'requests');
    assert.deepEqual(await chartSums(page, 'model'), Object.fromEntries(ledger.groups.map((group) => [group.group || '(no model)', group.requests])));
    await page.selectOption('#metric-picker', 'cost_usd');
    assert.equal(await page.textContent('#chart-model-title'), 'Cost by model');
    assert.deepEqual(await chartSums(page, 'model'), Object.fromEntries(ledger.groups.map((group) => [group.group || '(no model)', group.costNanoUsd / 1e9])));
    await page.selectOption('#metric-picker', 'requests');
    await page.selectOption('#range-picker', 'hour');
    await waitForLoads(page, 2);
    assert.equal(await page.evaluate(() => (window.tollgate!.charts.model.data as { labels?: unknown[] }).labels!.length), 24);
    assert.equal(
      (Object.values(await chartSums(page, 'model')) as number[]).reduce((a, b) => a + b, 0),
      ledger.totals.requests,
      'everything happened in the last 24 hours',
    );
    const png = join(mkdtempSync(join(tmpdir(), 'tollgate-shot-')), 'dashboard.png');
    await page.screenshot({ path: png });
    const bytes = readFileSync(png);
    assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    assert.equal(bytes.subarray(12, 16).toString('latin1'), 'IHDR');
    assert.deepEqual([bytes.readUInt32BE(16), bytes.readUInt32BE(20)], [1280, 900]);
    assert.ok(bytes.length > 30_000, `a non-trivial screenshot (${bytes.length} bytes)`);
    rmSync(join(png, '..'), { recursive: true, force: true });
    assert.deepEqual((page as Page & { problems: string[] }).problems, []);
    await page.context().close();
  });

  test('signing in with the admin key shows every account, with an account picker', async () => {
    const page = await openPage('/dashboard/');
    await signIn(page, ADMIN_KEY);
    await waitForLoads(page, 1);
    assert.equal(await page.textContent('#session-label'), 'Admin');
    const options = await page.$$eval('#account-picker option', (items) => items.map((item) => item.textContent));
    assert.deepEqual(options.sort(), ['All accounts', 'Second team', 'default']);
    const since = await page.evaluate(() => window.tollgate!.data!.series.since);
    expectTotals(await shownTotals(page), (await gateway.server.storage.queryUsage({ since })).totals);
    assert.match((await page.textContent('#recent-table'))!, /Second team/);
    await page.selectOption('#account-picker', otherAccountId);
    await waitForLoads(page, 2);
    expectTotals(await shownTotals(page), (await gateway.server.storage.queryUsage({ accountId: otherAccountId, since })).totals);
    assert.equal(await page.locator('#recent-table tbody tr').count(), 1);
    await page.context().close();
  });

  const openPlayground = async () => {
    const page = await openPage('/playground/');
    await signIn(page, gateway.key);
    await page.waitForSelector(`#model option[value="${model}"]`, { state: 'attached' });
    return page;
  };
  const send = async (page: Page) => {
    await page.click('#send');
    await page.waitForFunction(() => document.getElementById('completion-form')!.dataset.state === 'done');
  };

  test('playground: a streamed completion arrives in pieces, then its usage', async () => {
    const page = await openPlayground();
    await page.fill('#max_tokens', '300');
    await page.fill('#temperature', '0.8');
    await page.fill('#seed', '7');
    await page.evaluate(() => {
      const seen: number[] = [];
      (window as unknown as { seen: number[] }).seen = seen;
      new MutationObserver(() => seen.push(document.querySelector('#choices .text')?.textContent?.length ?? 0)).observe(document.getElementById('choices')!, {
        childList: true,
        subtree: true,
        characterData: true,
      });
    });
    await send(page);
    const text = (await page.textContent('#choice-0 .text'))!;
    const seen = await page.evaluate(() => (window as unknown as { seen: number[] }).seen);
    assert.ok(text.length > 20);
    const partial = new Set(seen.filter((length) => length > 0 && length < text.length));
    assert.ok(partial.size >= 3, `text was shown piece by piece before the stream ended (${[...partial].join(',')})`);
    const record = (await gateway.server.storage.recentUsage({ accountId: gateway.accountId, limit: 1 }))[0];
    assert.equal(record.stream, true);
    assert.equal(await page.getAttribute('#usage', 'data-total'), String(record.totalTokens));
    assert.match((await page.textContent('#usage'))!, new RegExp(`completion ${record.completionTokens}`));
    assert.match((await page.textContent('#run-status'))!, /Done\. .*chunks/);
    await page.context().close();
  });

  test('playground: logprobs are shown per token with the alternatives; API errors with their param', async () => {
    const page = await openPlayground();
    await page.fill('#max_tokens', '8');
    await page.fill('#logprobs', '2');
    await page.fill('#prompt', 'The budget');
    // Ban the model's end-of-text so the completion has exactly max_tokens tokens.
    await page.fill('#logit_bias', '{"100257": -100}');
    await send(page);
    const tokens = page.locator('#choice-0 .token');
    assert.equal(await tokens.count(), 8);
    const title = (await tokens.first().getAttribute('title'))!;
    assert.match(title, /logprob -?\d+\.\d{4} \(p [\d.]+%\)/);
    assert.match(title, /Top alternatives:/);
    assert.ok(Number(await tokens.first().getAttribute('data-logprob')) <= 0);

    await page.fill('#temperature', '5');
    await send(page);
    assert.equal(await page.isVisible('#completion-error'), true);
    assert.equal(await page.getAttribute('#completion-error', 'data-param'), 'temperature');
    const error = (await page.textContent('#completion-error'))!;
    assert.match(error, /'temperature' must be a number from 0 to 2\./);
    assert.match(error, /HTTP 400 · type: invalid_request_error · param: temperature · code: invalid_value/);

    await page.fill('#temperature', '');
    await page.fill('#logit_bias', '{not json');
    await send(page);
    assert.equal(await page.getAttribute('#completion-error', 'data-param'), 'logit_bias');
    await page.context().close();
  });

  test('playground: keep-alive comments, the named done event and a late error event', async () => {
    const page = await openPlayground();
    const chunk = (text: string) =>
      `data: ${JSON.stringify({ id: 'cmpl-x', object: 'text_completion', created: 1, model, choices: [{ text, index: 0, logprobs: null, finish_reason: null }] })}\n\n`;
    await page.route('**/v5/completions', (route) =>
      route.fulfill({
        status: 200,
        contentType: 'text/event-stream',
        body: `: ping\n\n${chunk('Hello')}: ping\n\n${chunk(' world')}data: ${JSON.stringify({ error: { message: 'The vendor stopped answering.', type: 'upstream_error', param: null, code: 'vendor_timeout' } })}\n\n`,
      }),
    );
    await send(page);
    assert.equal(await page.textContent('#choice-0 .text'), 'Hello world');
    assert.match((await page.textContent('#completion-error'))!, /The vendor stopped answering\..*code: vendor_timeout.*after 2 chunks/s);
    assert.match((await page.textContent('#run-status'))!, /2 keep-alive pings/);
    await page.unroute('**/v5/completions');
    await page.route('**/v5/completions', (route) =>
      route.fulfill({ status: 200, contentType: 'text/event-stream', body: `${chunk('Done')}event: done\ndata: [DONE]\n\n` }),
    );
    await send(page);
    assert.equal(await page.textContent('#choice-0 .text'), 'Done');
    assert.equal(await page.isVisible('#completion-error'), false);
    await page.context().close();
  });

  test('the admin key cannot use the playground, and is told so', async () => {
    const page = await openPage('/playground/');
    await signIn(page, ADMIN_KEY);
    await page.waitForSelector('#admin-notice');
    await page.click('#sign-out');
    await page.waitForSelector('#sign-in');
    await page.context().close();
  });
});
