/** Start-up on an empty database, the pasted curl example, and the tollgate CLI. */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { entry, runCli, spawnGateway } from './support/gateway-process.js';
import { startTestGateway } from './support/test-gateway.js';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-cli-'));
const env = { DATABASE_URL: `sqlite:${join(dir, 'db', 'tollgate.db')}` };
after(() => rmSync(dir, { recursive: true, force: true }));

describe('start-up', () => {
  test('first start creates account default, prints the key once with a curl that works; later starts do not', async () => {
    const first = await spawnGateway(env);
    // The banner is written after the address line: wait for its last line, not for a fixed 200 ms.
    await first.waitForStdout(/"max_tokens": 24}'\n/);
    const output = first.stdout();
    const key = /^\s+(tg_[A-Za-z0-9]{12}_[A-Za-z0-9]{32})$/m.exec(output)?.[1];
    assert.ok(key, output);
    const curlStart = output.indexOf('curl ');
    assert.ok(curlStart > 0, output);
    const curl = output
      .slice(curlStart)
      .split('\n')
      .filter((line) => line.trim())
      .join('\n');
    const answer = execFileSync('bash', ['-c', curl], { encoding: 'utf8' });
    const completion = JSON.parse(answer);
    assert.equal(completion.object, 'text_completion');
    assert.ok(completion.choices[0].text.length > 0);
    first.child.kill('SIGTERM');
    assert.equal(await first.exited, 0);

    const second = await spawnGateway(env);
    second.child.kill('SIGTERM');
    assert.equal(await second.exited, 0);
    // All it ever wrote, not what had arrived 200 ms after the address line.
    if (!second.child.stdout!.closed) await new Promise((resolve) => second.child.stdout!.once('close', resolve));
    assert.ok(!second.stdout().includes(key));
    assert.ok(!/tg_[A-Za-z0-9]{12}_/.test(second.stdout()));
  });

  test('a port already taken stops serve with exit 1 and one line naming it, with one process or several workers', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = String((taken.address() as { port: number }).port);
    try {
      for (const workers of ['1', '2']) {
        const result = spawnSync(process.execPath, [entry, 'serve', '--workers', workers], {
          env: { ...process.env, ...env, HOST: '127.0.0.1', PORT: port, LOG_LEVEL: 'warn' },
          encoding: 'utf8',
          timeout: 20_000,
          killSignal: 'SIGKILL',
        });
        assert.equal(result.status, 1, `--workers ${workers}: ${result.signal ?? ''} ${result.stderr}`);
        assert.match(result.stderr, /^tollgate: .*EADDRINUSE/m, `--workers ${workers}`);
        assert.ok(!result.stdout.includes('Tollgate listening'), result.stdout);
      }
    } finally {
      taken.close();
    }
  });
});

describe('tollgate CLI', () => {
  test('accounts, keys, revoke, usage, budgets, limits, migrate', async () => {
    const created = runCli(['accounts', 'create', 'team-a'], env);
    assert.equal(created.status, 0, created.stderr);
    const accountId = created.stdout.trim().split('\n').pop()!;
    assert.match(accountId, /^acct_/);
    assert.match(runCli(['accounts', 'list'], env).stdout, /team-a/);

    const keyOut = runCli(['keys', 'create', '--account', accountId, '--name', 'ci'], env);
    assert.equal(keyOut.status, 0, keyOut.stderr);
    const key = keyOut.stdout.trim().split('\n').pop()!;
    assert.match(key, /^tg_[A-Za-z0-9]{12}_[A-Za-z0-9]{32}$/);
    const list = runCli(['keys', 'list', '--account', accountId], env);
    assert.match(list.stdout, /ci/);
    assert.ok(!list.stdout.includes(key), 'a key is never printed again');

    const gateway = await spawnGateway(env);
    const call = () =>
      fetch(`${gateway.url}/v5/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: 'local/tollgate-small', prompt: 'Hello', max_tokens: 3 }),
      });
    const ok = await call();
    assert.equal(ok.status, 200);
    const body = await ok.json();

    const usage = runCli(['usage', '--account', accountId, '--by', 'model', '--format', 'json'], env);
    assert.equal(usage.status, 0, usage.stderr);
    const report = JSON.parse(usage.stdout);
    assert.equal(report.totals.totalTokens, body.usage.total_tokens);
    assert.equal(report.groups[0].group, 'local/tollgate-small');
    const csv = runCli(['usage', '--account', accountId, '--by', 'day', '--format', 'csv'], env);
    assert.match(csv.stdout, /^day,requests/);
    assert.match(runCli(['usage', '--account', accountId], env).stdout, /total/);

    const keyId = `key_${key.split('_')[1]}`;
    assert.equal(runCli(['keys', 'revoke', keyId], env).status, 0);
    assert.equal((await call()).status, 401);

    assert.match(runCli(['usage', '--account', accountId], env).stdout, /cost_usd\s+unpriced_requests\n.*\s0\s+0\n$/s, 'the built-in model is free');

    assert.equal(runCli(['budgets', 'set', '--account', accountId, '--tokens', '1000', '--period', 'day'], env).status, 0);
    const usd = runCli(['budgets', 'set', '--account', accountId, '--usd', '12.5', '--period', 'month'], env);
    assert.equal(usd.status, 0, usd.stderr);
    assert.match(usd.stdout, /budget set: \$12\.5 per month/);
    // Both budgets of the account, with what the ledger holds this period (the built-in model is free).
    const listed = runCli(['budgets', 'list', '--account', accountId], env);
    assert.equal(listed.status, 0, listed.stderr);
    assert.match(listed.stdout, /^\(account\)\s+tokens\s+day\s+1000\s+\d+\s+\d+\s+\d{4}-/m);
    assert.match(listed.stdout, /^\(account\)\s+usd\s+month\s+\$12\.5\s+\$0\s+\$12\.5\s+\d{4}-/m);
    assert.equal(runCli(['limits', 'set', '--account', accountId, '--rpm', '60', '--tpm', '1000'], env).status, 0);
    // A limit not given keeps its value; 'unlimited' removes one.
    assert.match(runCli(['limits', 'set', '--account', accountId, '--tpm', '2000'], env).stdout, /rpm=60 tpm=2000$/m);
    assert.match(runCli(['limits', 'set', '--account', accountId, '--rpm', 'unlimited'], env).stdout, /rpm=unlimited tpm=2000$/m);
    assert.match(runCli(['migrate'], env).stdout, /up to date/);
    gateway.child.kill('SIGTERM');
    assert.equal(await gateway.exited, 0);
  });

  test('migrate on a fresh database names the migrations it applied; run again, the schema is up to date', () => {
    const fresh = { DATABASE_URL: `sqlite:${join(dir, 'fresh', 'tollgate.db')}` };
    const first = runCli(['migrate'], fresh);
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stdout, /^applied migrations \d+(, \d+)*$/m);
    const second = runCli(['migrate'], fresh);
    assert.equal(second.status, 0, second.stderr);
    assert.match(second.stdout, /schema is up to date/);
  });

  test('--version prints the package version; GET /openapi.json names the same', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    const result = runCli(['--version'], env);
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stdout.trim(), version);
    const gateway = await startTestGateway();
    try {
      const document = await fetch(`${gateway.url}/openapi.json`).then((response) => response.json());
      assert.equal(document.info.version, version);
    } finally {
      await gateway.stop();
    }
  });

  test('bad arguments exit non-zero with a one-line message', () => {
    for (const args of [
      ['accounts', 'create'],
      ['accounts', 'create', ''],
      ['accounts', 'create', 'x'.repeat(201)],
      ['keys', 'create'],
      ['budgets', 'set', '--account', 'x', '--tokens', 'many', '--period', 'day'],
      ['budgets', 'set', '--account', 'x', '--period', 'day'],
      ['budgets', 'set', '--account', 'x', '--tokens', '5', '--usd', '1', '--period', 'day'],
      ['budgets', 'set', '--account', 'x', '--usd', '1.0000000001', '--period', 'day'],
      ['budgets', 'set', '--account', 'x', '--usd', '-1', '--period', 'day'],
      ['budgets', 'set', '--account', 'x', '--usd', '10000000000', '--period', 'day'],
      ['limits', 'set', '--rpm', '5'],
      ['usage', '--account', 'x', '--since', 'not-a-date'],
      ['nonsense-command'],
    ]) {
      const result = runCli(args, env);
      assert.notEqual(result.status, 0, args.join(' '));
      assert.equal(result.stderr.trim().split('\n').length, 1, `${args.join(' ')}: ${result.stderr}`);
    }
    // A key's label is held to what POST /admin/keys accepts, before anything is looked up.
    const longLabel = runCli(['keys', 'create', '--account', 'x', '--name', 'x'.repeat(201)], env);
    assert.notEqual(longLabel.status, 0);
    assert.match(longLabel.stderr, /at most 200 characters/);
  });

  test('budgets and limits for an account or key that does not exist, or a key of another account, exit non-zero naming it', () => {
    const account = runCli(['accounts', 'create', 'team-targets'], env).stdout.trim().split('\n').pop()!;
    const other = runCli(['accounts', 'create', 'team-elsewhere'], env).stdout.trim().split('\n').pop()!;
    const otherKey = runCli(['keys', 'create', '--account', other], env).stdout.trim().split('\n').pop()!;
    const otherKeyId = `key_${otherKey.split('_')[1]}`;
    const cases: [string[], string][] = [
      [['budgets', 'set', '--account', account, '--key', otherKeyId, '--tokens', '5', '--period', 'day'], otherKeyId],
      [['budgets', 'set', '--account', account, '--key', 'key_nosuchkey000', '--tokens', '5', '--period', 'day'], 'key_nosuchkey000'],
      [['limits', 'set', '--account', 'acct_nosuchaccount', '--rpm', '5'], 'acct_nosuchaccount'],
      [['limits', 'set', '--key', 'key_nosuchkey000', '--rpm', '5'], 'key_nosuchkey000'],
    ];
    for (const [args, named] of cases) {
      const result = runCli(args, env);
      assert.notEqual(result.status, 0, args.join(' '));
      assert.equal(result.stderr.trim().split('\n').length, 1, `${args.join(' ')}: ${result.stderr}`);
      assert.ok(result.stderr.includes(named), result.stderr);
    }
    const ownKey = runCli(['budgets', 'set', '--account', other, '--key', otherKeyId, '--tokens', '5', '--period', 'day'], env);
    assert.equal(ownKey.status, 0, ownKey.stderr);
    assert.equal(runCli(['limits', 'set', '--key', otherKeyId, '--rpm', '5'], env).status, 0);
  });

  test('usage and keys list for an account that does not exist exit non-zero naming it, rather than an empty report', () => {
    for (const args of [
      ['usage', '--account', 'acct_nosuchaccount'],
      ['usage', '--account', 'acct_nosuchaccount', '--format', 'json'],
      ['keys', 'list', '--account', 'acct_nosuchaccount'],
    ]) {
      const result = runCli(args, env);
      assert.notEqual(result.status, 0, args.join(' '));
      assert.equal(result.stdout, '', args.join(' '));
      assert.equal(result.stderr.trim().split('\n').length, 1, `${args.join(' ')}: ${result.stderr}`);
      assert.ok(result.stderr.includes('acct_nosuchaccount'), result.stderr);
    }
  });

  test('a database that cannot be reached: one line with what the driver answered', () => {
    const result = runCli(['accounts', 'list'], { ...env, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/tollgate' });
    assert.notEqual(result.status, 0);
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
    assert.match(result.stderr, /^tollgate: .*ECONNREFUSED 127\.0\.0\.1:1/);
  });

  test('a bad LOG_LEVEL stops serve and the CLI with one line naming it and the levels', () => {
    for (const args of [['serve'], ['accounts', 'list']]) {
      const result = runCli(args, { ...env, LOG_LEVEL: 'verbose' });
      assert.notEqual(result.status, 0, args.join(' '));
      assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
      assert.match(result.stderr, /LOG_LEVEL must be fatal, error, warn, info, debug, trace or silent, got 'verbose'/, args.join(' '));
    }
    const quiet = runCli(['accounts', 'list'], { ...env, LOG_LEVEL: 'Debug' });
    assert.equal(quiet.status, 0, quiet.stderr);
  });

  test('a bad TOLLGATE_HEAP_GROWING_PERCENT stops serve with a message naming it', () => {
    for (const value of ['lots', '-5', '2.5']) {
      const result = runCli(['serve'], { ...env, TOLLGATE_HEAP_GROWING_PERCENT: value });
      assert.notEqual(result.status, 0, value);
      assert.match(result.stderr, /TOLLGATE_HEAP_GROWING_PERCENT must be a whole number 0–1000/, value);
    }
  });

  test('a bad TOLLGATE_PARALLEL_SCAVENGE stops serve with a message naming it', () => {
    for (const value of ['maybe', '1', 'yes']) {
      const result = runCli(['serve'], { ...env, TOLLGATE_PARALLEL_SCAVENGE: value });
      assert.notEqual(result.status, 0, value);
      assert.match(result.stderr, /TOLLGATE_PARALLEL_SCAVENGE must be auto, on or off/, value);
    }
  });

  test('a bad TOLLGATE_WASM_TIER_UP stops serve with a message naming it', () => {
    for (const value of ['auto', '1']) {
      const result = runCli(['serve'], { ...env, TOLLGATE_WASM_TIER_UP: value });
      assert.notEqual(result.status, 0, value);
      assert.match(result.stderr, /TOLLGATE_WASM_TIER_UP must be on or off/, value);
    }
  });
});

describe('the config file', () => {
  test('sets the body limit and the CORS origins; TOLLGATE_CORS_ORIGINS wins over the file; a key it does not know stops start naming it', async () => {
    const path = join(dir, 'settings.json');
    writeFileSync(path, JSON.stringify({ bodyLimitBytes: 2048, corsOrigins: ['https://file.example'] }));
    const gateway = await startTestGateway({ TOLLGATE_CONFIG: path, TOLLGATE_CORS_ORIGINS: 'https://env.example' });
    try {
      const call = (prompt: string) =>
        fetch(`${gateway.url}/v5/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': gateway.key },
          body: JSON.stringify({ model: 'local/tollgate-small', prompt, max_tokens: 1 }),
        });
      assert.equal((await call('x'.repeat(100))).status, 200);
      const large = await call('x'.repeat(3000));
      assert.equal(large.status, 413);
      const preflight = (origin: string) =>
        fetch(`${gateway.url}/v5/completions`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
      assert.equal((await preflight('https://env.example')).headers.get('access-control-allow-origin'), 'https://env.example');
      assert.equal((await preflight('https://file.example')).headers.get('access-control-allow-origin'), null);
    } finally {
      await gateway.stop();
    }
    writeFileSync(path, JSON.stringify({ limits: { rpm: 60 } }));
    const refused = runCli(['serve'], { ...env, TOLLGATE_CONFIG: path });
    assert.notEqual(refused.status, 0);
    assert.match(refused.stderr, /TOLLGATE_CONFIG: .*settings\.json: .*limits/);
  });
});
