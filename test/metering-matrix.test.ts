/**
 * Metering truth, as one table: every vendor wire format (and the local model) × stream or not ×
 * the ways a request can go (plain, a stop the gateway enforces, no usage from the vendor, an error
 * or a timeout before output, an error after output, a client cancel, emulated n, echo, token
 * prompts and best_of or their refusal). A vendor is one row of `rows`: what it does natively picks
 * its cells and what they expect, so a new row gets the whole table. Each cell asserts that
 * the response's usage, the ledger row and GET /v5/usage agree, and that they equal what the mock
 * vendor billed, or carry the `estimated` flag with the tokenizer's count when it billed nothing we
 * could read.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { generateKey } from '../src/auth/api-keys.js';
import type { UsageRecord } from '../src/storage/types.js';
import { MockUpstream } from './support/mock-upstream.js';
import { parseSse, startTestGateway, type TestGateway } from './support/test-gateway.js';
import { anthropicMessages, geminiGenerateContent, openaiChat, openaiCompletions, type Billed, type WireFormat } from './support/vendor-wire.js';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-metering-'));
const transport = { connectTimeoutMs: 1000, idleTimeoutMs: 2000, responseTimeoutMs: 3000, maxRetries: 0 };
let gateway: TestGateway;

interface RemoteVendor {
  model: string;
  wire: WireFormat;
  mock: MockUpstream;
  /** The vendor returns n choices from one call (else the gateway makes n calls). */
  nativeN: boolean;
  /** The vendor echoes the prompt itself (else the gateway prepends it). */
  nativeEcho: boolean;
  /** A stop sequence this vendor cannot take, so the gateway enforces it; null when it takes every stop. */
  gatewayStop: string | null;
  /** The vendor takes a prompt given as token ids and `best_of` (else the gateway refuses them before any call). */
  tokenPromptsAndBestOf: boolean;
}

/** The table's rows: what each vendor does natively decides which cells it gets and what they expect. */
const rows: Record<string, Omit<RemoteVendor, 'mock'>> = {
  openai: { model: 'openai/gpt-3.5-turbo-instruct', wire: openaiCompletions, nativeN: true, nativeEcho: true, gatewayStop: null, tokenPromptsAndBestOf: true },
  'chat-only': { model: 'house/chat-model', wire: openaiChat, nativeN: false, nativeEcho: false, gatewayStop: null, tokenPromptsAndBestOf: false },
  anthropic: {
    model: 'anthropic/claude-sonnet-4-5',
    wire: anthropicMessages,
    nativeN: false,
    nativeEcho: false,
    gatewayStop: '\n',
    tokenPromptsAndBestOf: false,
  },
  gemini: { model: 'gemini/gemini-2.5-flash', wire: geminiGenerateContent, nativeN: false, nativeEcho: false, gatewayStop: null, tokenPromptsAndBestOf: false },
};

const remote: Record<string, RemoteVendor> = {};

before(async () => {
  for (const [name, row] of Object.entries(rows)) remote[name] = { ...row, mock: await MockUpstream.start() };
  const configPath = join(dir, 'tollgate.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      vendors: {
        openai: transport,
        anthropic: transport,
        gemini: transport,
        house: {
          kind: 'openai-compatible',
          baseUrl: remote['chat-only'].mock.url,
          completions: 'chat',
          models: [{ name: 'chat-model', contextWindow: 8192 }],
          ...transport,
        },
      },
    }),
  );
  gateway = await startTestGateway({
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: remote.openai.mock.url,
    ANTHROPIC_API_KEY: 'sk-ant-test',
    ANTHROPIC_BASE_URL: remote.anthropic.mock.url,
    GEMINI_API_KEY: 'gm-test',
    GEMINI_BASE_URL: remote.gemini.mock.url,
    TOLLGATE_CONFIG: configPath,
    TOLLGATE_POLICY_CACHE_MS: '0',
  });
});

after(async () => {
  await gateway.stop();
  await Promise.all(Object.values(remote).map((vendor) => vendor.mock.close()));
  rmSync(dir, { recursive: true, force: true });
});

const prompt = 'Count the tokens of this prompt';

interface Tokens {
  promptTokens: number;
  completionTokens: number;
  estimated: boolean;
}

interface Outcome {
  status: number;
  /** The usage the response itself reported (JSON body, or the stream's usage chunk); null when it reported none. */
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
  texts: string[];
  record: UsageRecord;
  /** What GET /v5/usage added for this request. */
  usageDelta: { prompt_tokens: number; completion_tokens: number; total_tokens: number; requests: number };
}

async function usageTotals() {
  const response = await fetch(`${gateway.url}/v5/usage`, { headers: { 'x-api-key': gateway.key } });
  return (await response.json()).totals;
}

/** The newest ledger row, waiting for it when the request ended without telling the client (a cancel). */
async function newestRecord(after: string | null): Promise<UsageRecord> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const [record] = await gateway.server.storage.recentUsage({ accountId: gateway.accountId, limit: 1 });
    if (record && record.requestId !== after) return record;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('no new ledger record');
}

/**
 * Sends one request. `cancel` aborts it once the first output arrived (stream) or once `upstream`
 * has the request (not streamed: nothing reaches the client before the whole answer).
 */
async function send(body: Record<string, unknown>, options: { cancel?: boolean; upstream?: MockUpstream } = {}): Promise<Outcome> {
  const before = await usageTotals();
  const [previous] = await gateway.server.storage.recentUsage({ accountId: gateway.accountId, limit: 1 });
  const stream = body.stream === true;
  const payload = stream ? { ...body, stream_options: { include_usage: true } } : body;
  const controller = new AbortController();
  const pending = fetch(`${gateway.url}/v5/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': gateway.key },
    body: JSON.stringify(payload),
    signal: controller.signal,
  });
  let usage: Outcome['usage'] = null;
  const texts: string[] = [];
  let response: Response | null = null;
  if (options.cancel && !stream) {
    for (let attempt = 0; attempt < 200 && options.upstream?.requests.length === 0; attempt++) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    await pending.catch(() => undefined);
  } else {
    response = await pending;
  }
  if (response && options.cancel) {
    const reader = response.body!.getReader();
    let seen = '';
    while (!seen.includes('"text"')) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += Buffer.from(value).toString('utf8');
    }
    controller.abort();
    await reader.cancel().catch(() => undefined);
  } else if (response) {
    const text = await response.text();
    if (stream) {
      for (const event of parseSse(text)) {
        if (event.event !== null || event.data === '[DONE]') continue;
        const chunk = JSON.parse(event.data);
        if (chunk.usage) usage = chunk.usage;
        for (const choice of chunk.choices ?? []) texts[choice.index] = (texts[choice.index] ?? '') + choice.text;
      }
    } else if (response.status === 200) {
      const parsed = JSON.parse(text);
      usage = parsed.usage;
      for (const choice of parsed.choices) texts[choice.index] = choice.text;
    }
  }
  const record = await newestRecord(previous?.requestId ?? null);
  const afterTotals = await usageTotals();
  const usageDelta = {
    prompt_tokens: afterTotals.prompt_tokens - before.prompt_tokens,
    completion_tokens: afterTotals.completion_tokens - before.completion_tokens,
    total_tokens: afterTotals.total_tokens - before.total_tokens,
    requests: afterTotals.requests - before.requests,
  };
  return { status: response?.status ?? 499, usage, texts, record, usageDelta };
}

/** Response usage (when there is one) == ledger row == GET /v5/usage's change == what we expect. */
function assertMetered(outcome: Outcome, expected: Tokens): void {
  const { record } = outcome;
  const ledger = { promptTokens: record.promptTokens, completionTokens: record.completionTokens, estimated: record.estimated };
  assert.deepEqual(ledger, expected, `ledger row (${record.outcome}, ${record.status})`);
  assert.equal(record.totalTokens, expected.promptTokens + expected.completionTokens);
  assert.deepEqual(
    outcome.usageDelta,
    {
      prompt_tokens: expected.promptTokens,
      completion_tokens: expected.completionTokens,
      total_tokens: expected.promptTokens + expected.completionTokens,
      requests: 1,
    },
    'GET /v5/usage',
  );
  if (outcome.usage) {
    assert.deepEqual(
      [outcome.usage.prompt_tokens, outcome.usage.completion_tokens, outcome.usage.total_tokens],
      [expected.promptTokens, expected.completionTokens, expected.promptTokens + expected.completionTokens],
      'the response usage',
    );
  }
}

const exact = (billed: Billed): Tokens => ({ promptTokens: billed.prompt, completionTokens: billed.completion, estimated: false });
const nothing: Tokens = { promptTokens: 0, completionTokens: 0, estimated: false };

function countTokens(model: string, text: string): number {
  return gateway.server.registry.resolve(model).model.countTokens(text);
}

/** The gateway's own estimate: the tokenizer over the prompt and over what the vendor produced. */
function estimate(model: string, produced: string, promptCount?: number): Tokens {
  return { promptTokens: promptCount ?? countTokens(model, prompt), completionTokens: countTokens(model, produced), estimated: true };
}

const billed: Billed = { prompt: 7, completion: 3 };

for (const [name, row] of Object.entries(rows)) {
  describe(`metering: ${name}`, () => {
    beforeEach(() => remote[name].mock.reset());
    for (const stream of [false, true]) {
      const mode = stream ? 'stream' : 'non-stream';
      const vendor = () => remote[name];
      const reply = (answer: Parameters<WireFormat['json']>[0]) => (stream ? vendor().wire.stream(answer) : vendor().wire.json(answer));

      test(`${mode}, plain: the vendor's usage`, async () => {
        vendor().mock.reply(reply({ texts: ['Hello there'], usage: billed }));
        const outcome = await send({ model: vendor().model, prompt, max_tokens: 8, stream });
        assert.equal(outcome.status, 200);
        assert.equal(outcome.texts[0], 'Hello there');
        assertMetered(outcome, exact(billed));
      });

      test(`${mode}, no usage from the vendor: the tokenizer's estimate, flagged`, async () => {
        vendor().mock.reply(reply({ texts: ['Hello there'], usage: null }));
        const outcome = await send({ model: vendor().model, prompt, max_tokens: 8, stream });
        assert.equal(outcome.status, 200);
        assertMetered(outcome, estimate(vendor().model, 'Hello there'));
      });

      for (const status of [400, 401, 404, 429, 500]) {
        test(`${mode}, error ${status} before output: nothing billed`, async () => {
          vendor().mock.reply(vendor().wire.error(status, `refused with ${status}`));
          const outcome = await send({ model: vendor().model, prompt, max_tokens: 8, stream });
          assert.ok(outcome.status >= 400, `${outcome.status}`);
          assert.equal(outcome.record.outcome, 'vendor_error');
          assertMetered(outcome, nothing);
        });
      }

      test(`${mode}, client cancel: the vendor's prompt count when it sent one, plus the output so far`, async () => {
        const mock = vendor().mock;
        mock.reply(stream ? vendor().wire.hangAfterOutput('Hello', billed) : { hang: true });
        const outcome = await send({ model: vendor().model, prompt, max_tokens: 8, stream }, { cancel: true, upstream: mock });
        assert.equal(outcome.record.outcome, 'cancelled');
        assert.equal(await mock.requests[0].closedEarly, true, 'the upstream request was closed');
        if (!stream) assertMetered(outcome, nothing);
        else assertMetered(outcome, estimate(vendor().model, 'Hello', vendor().wire.reportsPromptEarly ? billed.prompt : undefined));
      });

      test(`${mode}, n = 2: what every upstream call billed`, async () => {
        if (vendor().nativeN) vendor().mock.reply(reply({ texts: ['One', 'Two'], usage: { prompt: 7, completion: 2 } }));
        else vendor().mock.reply(reply({ texts: ['One'], usage: billed }), reply({ texts: ['Two'], usage: billed }));
        const outcome = await send({ model: vendor().model, prompt, max_tokens: 8, n: 2, stream });
        assert.equal(outcome.status, 200);
        assert.deepEqual([...outcome.texts].sort(), ['One', 'Two']);
        assert.equal(vendor().mock.requests.length, vendor().nativeN ? 1 : 2);
        // Emulated n: each call carries the prompt, and the vendor bills it each time.
        assertMetered(outcome, vendor().nativeN ? exact({ prompt: 7, completion: 2 }) : exact({ prompt: 14, completion: 6 }));
      });

      test(`${mode}, echo: the vendor's usage; the echoed prompt is not completion tokens`, async () => {
        const text = vendor().nativeEcho ? `${prompt} Hello` : ' Hello';
        vendor().mock.reply(reply({ texts: [text], usage: billed }));
        const withUsage = await send({ model: vendor().model, prompt, max_tokens: 8, echo: true, stream });
        assert.equal(withUsage.texts[0], `${prompt} Hello`);
        assertMetered(withUsage, exact(billed));
        vendor().mock.reply(reply({ texts: [text], usage: null }));
        const withoutUsage = await send({ model: vendor().model, prompt, max_tokens: 8, echo: true, stream });
        assert.equal(withoutUsage.texts[0], `${prompt} Hello`);
        assertMetered(withoutUsage, estimate(vendor().model, ' Hello'));
      });

      test(`${mode}, a list of two prompts: what every upstream call billed`, async () => {
        const prompts = [prompt, 'A second prompt'];
        if (vendor().nativeN) vendor().mock.reply(reply({ texts: ['One', 'Two'], usage: { prompt: 12, completion: 2 } }));
        else vendor().mock.reply(reply({ texts: ['One'], usage: billed }), reply({ texts: ['Two'], usage: { prompt: 5, completion: 3 } }));
        const outcome = await send({ model: vendor().model, prompt: prompts, max_tokens: 8, stream });
        assert.equal(outcome.status, 200);
        assert.equal(outcome.texts.length, 2);
        assertMetered(outcome, vendor().nativeN ? exact({ prompt: 12, completion: 2 }) : exact({ prompt: 12, completion: 6 }));
      });

      test(`${mode}, a timeout before output: nothing billed`, async () => {
        // Silent past the whole-answer limit (responseTimeoutMs, 3 s here): the gateway gives up with a 504.
        vendor().mock.reply({ hang: true });
        const outcome = await send({ model: vendor().model, prompt, max_tokens: 8, stream });
        assert.equal(outcome.status, 504);
        assert.equal(outcome.record.outcome, 'vendor_error');
        assertMetered(outcome, nothing);
      });

      /** A request the vendor cannot serve: a 400 before any upstream call, recorded, nothing billed. */
      const assertRefusedFree = (outcome: Outcome) => {
        assert.equal(outcome.status, 400);
        assert.equal(vendor().mock.requests.length, 0, 'no upstream call');
        assertMetered(outcome, nothing);
      };

      const tokens = [464, 1614, 315, 279];
      if (!row.tokenPromptsAndBestOf) {
        test(`${mode}, token prompt: refused before any call, nothing billed`, async () => {
          assertRefusedFree(await send({ model: vendor().model, prompt: tokens, max_tokens: 8, echo: true, stream }));
        });
        if (!stream) {
          test('non-stream, best_of 3: refused before any call, nothing billed', async () => {
            assertRefusedFree(await send({ model: vendor().model, prompt, max_tokens: 8, best_of: 3 }));
          });
        }
      } else {
        test(`${mode}, token prompt echoed, no usage: the estimate counts the prompt's tokens once, not as completion`, async () => {
          const echoed = 'The state of the Hello';
          vendor().mock.reply(reply({ texts: [vendor().nativeEcho ? echoed : ' Hello'], usage: null }));
          const outcome = await send({ model: vendor().model, prompt: tokens, max_tokens: 8, echo: true, stream });
          assert.equal(outcome.status, 200);
          assert.equal(outcome.texts[0], echoed);
          const completion = Math.max(0, countTokens(vendor().model, echoed) - tokens.length);
          assertMetered(outcome, { promptTokens: tokens.length, completionTokens: completion, estimated: true });
        });

        if (!stream) {
          test('non-stream, best_of 3 of n 1, no usage: the candidates ranked away count too', async () => {
            vendor().mock.reply(reply({ texts: ['Hello there'], usage: null }));
            const outcome = await send({ model: vendor().model, prompt, max_tokens: 8, best_of: 3 });
            assert.equal(outcome.status, 200);
            assert.equal(vendor().mock.requests.length, 1, 'the vendor ranks the candidates itself');
            assertMetered(outcome, {
              promptTokens: countTokens(vendor().model, prompt),
              completionTokens: 3 * countTokens(vendor().model, 'Hello there'),
              estimated: true,
            });
          });
        }
      }

      if (stream) {
        test("stream, error after output: the vendor's prompt count when it sent one, plus the output so far, flagged", async () => {
          vendor().mock.reply(vendor().wire.breakAfterOutput('Hello', billed));
          const outcome = await send({ model: vendor().model, prompt, max_tokens: 8, stream });
          assert.equal(outcome.status, 200, 'the stream had begun');
          assert.equal(outcome.record.outcome, 'vendor_error');
          assertMetered(outcome, estimate(vendor().model, 'Hello', vendor().wire.reportsPromptEarly ? billed.prompt : undefined));
        });
      }

      if (row.gatewayStop !== null) {
        test(`${mode}, a stop the gateway enforces: the vendor's usage when it came with the text, else an estimate on its prompt count`, async () => {
          const stop = vendor().gatewayStop!;
          if (!stream) {
            // Text, finish and usage arrive together: the stop cuts the text, never the usage.
            vendor().mock.reply(reply({ texts: [`Line one${stop}Line two`], usage: { prompt: 7, completion: 5 } }));
            const outcome = await send({ model: vendor().model, prompt, max_tokens: 8, stop, stream });
            assert.equal(outcome.texts[0], 'Line one');
            assertMetered(outcome, exact({ prompt: 7, completion: 5 }));
            return;
          }
          // The stream goes on past the stop: the gateway closes it at once (the vendor bills less) and estimates on the vendor's prompt count.
          vendor().mock.reply(vendor().wire.hangAfterOutput(`Line one${stop}Line`, billed));
          const outcome = await send({ model: vendor().model, prompt, max_tokens: 8, stop, stream });
          assert.equal(outcome.texts[0], 'Line one');
          assert.equal(await vendor().mock.requests[0].closedEarly, true, 'the upstream request was closed');
          assertMetered(outcome, estimate(vendor().model, `Line one${stop}Line`, billed.prompt));
        });
      }
    }
  });
}

describe('metering: local', () => {
  const model = 'local/tollgate-small';
  for (const stream of [false, true]) {
    const mode = stream ? 'stream' : 'non-stream';
    const cells: Array<[string, Record<string, unknown>]> = [
      ['plain', {}],
      ['stop', { stop: [' the', '.'] }],
      ['n = 2', { n: 2 }],
      ['echo', { echo: true }],
      ['token prompt with echo', { prompt: [464, 1614, 315, 279, 11552], echo: true }],
      ...(stream ? [] : ([['best_of = 3', { best_of: 3 }]] as Array<[string, Record<string, unknown>]>)),
    ];
    for (const [cell, extra] of cells) {
      test(`${mode}, ${cell}: the model's own counts, exact`, async () => {
        const outcome = await send({ model, prompt, max_tokens: 12, temperature: 0.8, seed: 7, stream, ...extra });
        assert.equal(outcome.status, 200);
        const promptTokens = Array.isArray(extra.prompt) ? extra.prompt.length : countTokens(model, prompt);
        assert.ok(outcome.usage, 'the response reports usage');
        assert.equal(outcome.usage.prompt_tokens, promptTokens);
        assert.ok(outcome.usage.completion_tokens > 0);
        if (cell === 'best_of = 3') assert.ok(outcome.usage.completion_tokens > countTokens(model, outcome.texts[0]), 'every candidate counts');
        assertMetered(outcome, { promptTokens: outcome.usage.prompt_tokens, completionTokens: outcome.usage.completion_tokens, estimated: false });
      });
    }
  }

  test('stream, client cancel: the prompt and the tokens generated so far, exact', async () => {
    const outcome = await send({ model, prompt, max_tokens: 2000, logit_bias: { 100257: -100 }, stream: true }, { cancel: true });
    assert.equal(outcome.record.outcome, 'cancelled');
    assert.equal(outcome.record.promptTokens, countTokens(model, prompt));
    assert.ok(outcome.record.completionTokens > 0 && outcome.record.completionTokens < 2000, `${outcome.record.completionTokens}`);
    assertMetered(outcome, { promptTokens: outcome.record.promptTokens, completionTokens: outcome.record.completionTokens, estimated: false });
  });
});

describe('metering: refusals before output cost no budget', () => {
  for (const [name, policy] of [
    ['a daily token budget', 'budget'],
    ['a tokens-per-minute limit', 'tpm'],
  ] as const) {
    test(`${name}: a vendor error before output gives back the whole reservation`, async () => {
      const storage = gateway.server.storage;
      const account = await storage.createAccount(`refused-${policy}-${Math.random().toString(36).slice(2)}`);
      const generated = generateKey();
      await storage.createKey({ id: generated.id, accountId: account.id, name: null, prefix: generated.prefix, secretHash: generated.secretHash });
      if (policy === 'budget') await storage.setBudget({ accountId: account.id, keyId: null, unit: 'tokens', limit: 110, period: 'day' });
      else await storage.setRateLimit({ accountId: account.id, keyId: null, rpm: null, tpm: 110 });
      const vendor = remote.anthropic;
      vendor.mock.reset();
      // Each request reserves its prompt (about 6 tokens) and 100 completion tokens: with anything kept from the refused one, the next would not fit in 110.
      const body = JSON.stringify({ model: vendor.model, prompt, max_tokens: 100 });
      const headers = { 'content-type': 'application/json', 'x-api-key': generated.key };
      vendor.mock.reply(vendor.wire.error(500, 'overloaded'));
      const refused = await fetch(`${gateway.url}/v5/completions`, { method: 'POST', headers, body });
      assert.equal(refused.status, 502, await refused.text());
      vendor.mock.reply(vendor.wire.json({ texts: ['Fine'], usage: billed }));
      const next = await fetch(`${gateway.url}/v5/completions`, { method: 'POST', headers, body });
      assert.equal(next.status, 200, 'the refused request left the budget whole');
      const report = await storage.queryUsage({ accountId: account.id });
      assert.deepEqual([report.totals.requests, report.totals.promptTokens, report.totals.completionTokens], [2, billed.prompt, billed.completion]);
    });
  }
});
