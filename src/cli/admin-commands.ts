/** accounts, keys, usage, budgets, limits, migrate: thin wrappers over the Storage interface. */
import { Option, type Command } from 'commander';
import { issueKey } from '../auth/api-keys.js';
import type { Config } from '../config/config.js';
import { usageToCsv } from '../http/usage-route.js';
import { createStorage } from '../storage/create-storage.js';
import { formatUsd } from '../config/prices.js';
import type { Budget, BudgetPeriod, Storage, UsageGroupBy, UsageTotals } from '../storage/types.js';
import { budgetStates } from '../usage/budget-state.js';
import { requireAccount, requirePolicyTarget } from '../usage/policy-target.js';
import { accountName, keyLabel, limitValue, positiveInteger, usdAmount } from './cli-arguments.js';

type LoadConfig = () => Config;

/** Opens storage, applies pending migrations, and runs `work` with the numbers of those it applied. */
async function withStorage<T>(loadConfig: LoadConfig, work: (storage: Storage, applied: number[]) => Promise<T>): Promise<T> {
  // One command's writes: no checkpoints of its own (a running gateway's, or SQLite at close, checkpoints them).
  const storage = await createStorage(loadConfig().databaseUrl, { sqliteCheckpoints: false });
  try {
    const applied = await storage.migrate();
    return await work(storage, applied);
  } finally {
    await storage.close();
  }
}

function isoOption(value: string): string {
  const time = Date.parse(value);
  if (Number.isNaN(time)) throw new Error(`'${value}' is not an ISO 8601 date or time`);
  return new Date(time).toISOString();
}

export function registerAdminCommands(program: Command, loadConfig: LoadConfig): void {
  const print = (line: string) => process.stdout.write(`${line}\n`);

  const accounts = program.command('accounts').description('manage accounts');
  accounts
    .command('create')
    .description('create an account; prints its id on the last line')
    .argument('<name>', 'account name', accountName)
    .action(async (name: string) => {
      await withStorage(loadConfig, async (storage) => {
        const account = await storage.createAccount(name);
        print(`created account '${account.name}'`);
        print(account.id);
      });
    });
  accounts
    .command('list')
    .description('list accounts')
    .action(async () => {
      await withStorage(loadConfig, async (storage) => {
        const rows = (await storage.listAccounts()).map((account) => [account.id, account.name, account.createdAt]);
        print(formatTable(['id', 'name', 'created_at'], rows));
      });
    });

  const keys = program.command('keys').description('manage API keys');
  keys
    .command('create')
    .description('create a key; prints the key alone on the last line')
    .requiredOption('--account <id>', 'account id')
    .option('--name <label>', 'a label for the key (at most 200 characters)', keyLabel)
    .action(async (options: { account: string; name?: string }) => {
      await withStorage(loadConfig, async (storage) => {
        await requireAccount(storage, options.account);
        const issued = await issueKey(storage, options.account, options.name ?? null);
        print(`created key ${issued.id} for ${options.account}; it is shown only this once:`);
        print(issued.key);
      });
    });
  keys
    .command('list')
    .description('list the keys of an account')
    .requiredOption('--account <id>', 'account id')
    .action(async (options: { account: string }) => {
      await withStorage(loadConfig, async (storage) => {
        await requireAccount(storage, options.account);
        const rows = (await storage.listKeys(options.account)).map((key) => [key.id, key.name ?? '', `${key.prefix}_…`, key.createdAt, key.revokedAt ?? '']);
        print(formatTable(['id', 'name', 'prefix', 'created_at', 'revoked_at'], rows));
      });
    });
  keys
    .command('revoke <keyId>')
    .description('revoke a key; it gets 401 at once')
    .action(async (keyId: string) => {
      await withStorage(loadConfig, async (storage) => {
        if (!(await storage.revokeKey(keyId))) throw new Error(`no active key '${keyId}'`);
        print(`revoked ${keyId}`);
      });
    });

  program
    .command('usage')
    .description("an account's usage")
    .requiredOption('--account <id>', 'account id')
    .option('--since <iso>', 'inclusive start', isoOption)
    .option('--until <iso>', 'exclusive end', isoOption)
    .addOption(new Option('--by <group>', 'group by').choices(['model', 'day', 'key']))
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'json', 'csv']).default('table'))
    .action(async (options: { account: string; since?: string; until?: string; by?: UsageGroupBy; format: string }) => {
      await withStorage(loadConfig, async (storage) => {
        await requireAccount(storage, options.account);
        const report = await storage.queryUsage({ accountId: options.account, since: options.since, until: options.until, groupBy: options.by });
        if (options.format === 'json') return print(JSON.stringify(report, null, 2));
        if (options.format === 'csv') return process.stdout.write(usageToCsv(report, options.by));
        const row = (name: string, totals: UsageTotals) => [
          name,
          totals.requests,
          totals.promptTokens,
          totals.completionTokens,
          totals.totalTokens,
          formatUsd(totals.costNanoUsd),
          totals.unpricedRequests,
        ];
        const rows = [...(options.by ? report.groups : []).map((group) => row(group.group ?? '-', group)), row('total', report.totals)];
        print(formatTable([options.by ?? '', 'requests', 'prompt_tokens', 'completion_tokens', 'total_tokens', 'cost_usd', 'unpriced_requests'], rows));
      });
    });

  const budgets = program.command('budgets').description('token and USD budgets');
  budgets
    .command('list')
    .description("an account's budgets, with what is used and left of the current period")
    .requiredOption('--account <id>', 'account id')
    .action(async (options: { account: string }) => {
      await withStorage(loadConfig, async (storage) => {
        await requireAccount(storage, options.account);
        const amount = (unit: Budget['unit'], value: number) => (unit === 'usd' ? `$${formatUsd(value)}` : String(value));
        const rows = (await budgetStates(storage, options.account)).map(({ budget, used, resetsAt }) => [
          budget.keyId ?? '(account)',
          budget.unit,
          budget.period,
          amount(budget.unit, budget.limit),
          amount(budget.unit, used),
          amount(budget.unit, Math.max(0, budget.limit - used)),
          resetsAt === null ? 'never' : new Date(resetsAt).toISOString(),
        ]);
        print(formatTable(['scope', 'unit', 'period', 'limit', 'used', 'left', 'resets_at'], rows));
      });
    });
  budgets
    .command('set')
    .description('set a budget in tokens or in US dollars (a scope may have one of each)')
    .requiredOption('--account <id>', 'account id')
    .option('--key <keyId>', 'limit one key of the account instead of the whole account')
    .addOption(new Option('--tokens <n>', 'token budget').argParser(positiveInteger).conflicts('usd'))
    .addOption(new Option('--usd <amount>', 'budget in US dollars, at the prices in the config file').argParser(usdAmount))
    .addOption(new Option('--period <period>', 'budget period').choices(['day', 'month', 'total']).makeOptionMandatory())
    .action(async (options: { account: string; key?: string; tokens?: number; usd?: number; period: BudgetPeriod }) => {
      if (options.tokens === undefined && options.usd === undefined) throw new Error('give --tokens or --usd');
      const budget: Budget =
        options.usd === undefined
          ? { accountId: options.account, keyId: options.key ?? null, unit: 'tokens', limit: options.tokens ?? 0, period: options.period }
          : { accountId: options.account, keyId: options.key ?? null, unit: 'usd', limit: options.usd, period: options.period };
      await withStorage(loadConfig, async (storage) => {
        await requirePolicyTarget(storage, { accountId: budget.accountId, keyId: budget.keyId });
        await storage.setBudget(budget);
        const amount = budget.unit === 'usd' ? `$${formatUsd(budget.limit)}` : `${budget.limit} tokens`;
        print(`budget set: ${amount} per ${budget.period} for ${budget.keyId ?? budget.accountId}`);
      });
    });

  program
    .command('limits')
    .description('rate limits')
    .command('set')
    .description('set requests and/or tokens per minute; a limit not given keeps its current value')
    .option('--account <id>', 'account id')
    .option('--key <keyId>', 'key id')
    .option('--rpm <n>', "requests per minute, or 'unlimited'", limitValue)
    .option('--tpm <n>', "tokens per minute, or 'unlimited'", limitValue)
    .action(async (options: { account?: string; key?: string; rpm?: number | 'unlimited'; tpm?: number | 'unlimited' }) => {
      if (Boolean(options.account) === Boolean(options.key)) throw new Error('give exactly one of --account or --key');
      if (options.rpm === undefined && options.tpm === undefined) throw new Error('give --rpm and/or --tpm');
      await withStorage(loadConfig, async (storage) => {
        const accountId = options.account ?? null;
        const keyId = options.key ?? null;
        await requirePolicyTarget(storage, { accountId, keyId });
        // The scope's own limit (an account's when setting an account, a key's when setting a key).
        const current = (await storage.getRateLimits(accountId ?? '', keyId)).find((limit) => limit.keyId === keyId);
        const given = (value: number | 'unlimited' | undefined, kept: number | null | undefined) =>
          value === undefined ? (kept ?? null) : value === 'unlimited' ? null : value;
        const rpm = given(options.rpm, current?.rpm);
        const tpm = given(options.tpm, current?.tpm);
        await storage.setRateLimit({ accountId, keyId, rpm, tpm });
        print(`limits set for ${accountId ?? keyId}: rpm=${rpm ?? 'unlimited'} tpm=${tpm ?? 'unlimited'}`);
      });
    });

  program
    .command('migrate')
    .description('apply pending schema migrations and exit')
    .action(async () => {
      await withStorage(loadConfig, async (_storage, applied) => {
        print(applied.length ? `applied migrations ${applied.join(', ')}` : 'schema is up to date');
      });
    });
}

/** A plain left-aligned text table for terminal output. */
function formatTable(header: string[], rows: (string | number)[][]): string {
  const all = [header, ...rows].map((row) => row.map(String));
  const widths = header.map((_, column) => Math.max(...all.map((row) => (row[column] ?? '').length)));
  const line = (row: string[]) =>
    row
      .map((cell, column) => cell.padEnd(widths[column]))
      .join('  ')
      .trimEnd();
  return all.map(line).join('\n');
}
