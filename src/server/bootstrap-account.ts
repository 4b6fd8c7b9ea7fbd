/** On an empty database: create account `default` with one key and print the key once. */
import { issueKey } from '../auth/api-keys.js';
import type { Account, Storage } from '../storage/types.js';

export interface BootstrapResult {
  accountId: string;
  key: string;
}

export async function bootstrapDefaultAccount(storage: Storage): Promise<BootstrapResult | null> {
  if ((await storage.countAccounts()) > 0) return null;
  let account: Account;
  try {
    account = await storage.createAccount('default');
  } catch {
    return null; // another instance created it first; its key was printed there
  }
  const { key } = await issueKey(storage, account.id, 'default');
  return { accountId: account.id, key };
}

export function bootstrapBanner(result: BootstrapResult, baseUrl: string, model: string): string {
  return [
    '',
    `Created account 'default' (${result.accountId}) with an API key. It is shown only this once:`,
    '',
    `  ${result.key}`,
    '',
    'Try it:',
    '',
    `  curl -s ${baseUrl}/v5/completions \\`,
    `    -H 'content-type: application/json' \\`,
    `    -H 'x-api-key: ${result.key}' \\`,
    `    -d '{"model": "${model}", "prompt": "The state of the union is", "max_tokens": 24}'`,
    '',
  ].join('\n');
}
