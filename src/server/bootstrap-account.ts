/** On an empty database: create account `default` with one key, and print the key once. */
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

/** The address line and, when this start created the first account, its key and a request to try. */
export function announce(url: string, workers: number | null, bootstrapped: BootstrapResult | null, firstModel = 'local/tollgate-small'): void {
  process.stdout.write(`Tollgate listening on ${url}${workers === null ? '' : ` (${workers} workers)`}\n`);
  if (!bootstrapped) return;
  const banner = [
    '',
    `Created account 'default' (${bootstrapped.accountId}) with an API key. It is shown only this once:`,
    '',
    `  ${bootstrapped.key}`,
    '',
    'Try it:',
    '',
    `  curl -s ${url}/v5/completions \\`,
    `    -H 'content-type: application/json' \\`,
    `    -H 'x-api-key: ${bootstrapped.key}' \\`,
    `    -d '{"model": "${firstModel}", "prompt": "The state of the union is", "max_tokens": 24}'`,
    '',
  ];
  process.stdout.write(`${banner.join('\n')}\n`);
}
