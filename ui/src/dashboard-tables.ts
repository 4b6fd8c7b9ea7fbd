/** The budget, rate-limit and recent-request tables. */
import type { Account, KeyInfo, Limits, RecentRecord } from './dashboard-data.js';
import { el, type Child } from './dom.js';
import { formatInt, formatMs, formatTime, formatUsd } from './format.js';

export interface Names {
  account(id: string | null): string;
  key(id: string | null): string;
}

export function namesFor(accounts: Account[], keys: KeyInfo[]): Names {
  const accountNames = new Map(accounts.map((account) => [account.id, account.name]));
  const short = (prefix: string) => `${prefix.slice(0, 8)}…`;
  const keyNames = new Map(keys.map((key) => [key.id, key.name ? `${key.name} (${short(key.prefix)})` : short(key.prefix)]));
  return {
    account: (id) => (id ? (accountNames.get(id) ?? id) : '—'),
    key: (id) => (id ? (keyNames.get(id) ?? id) : 'no key'),
  };
}

function table(id: string, headers: string[], rows: Child[][], numeric: Set<number>, empty: string): HTMLElement {
  if (rows.length === 0) return el('p', { class: 'empty', id }, empty);
  return el(
    'div',
    { class: 'table-wrap' },
    el(
      'table',
      { id },
      el('thead', null, el('tr', null, ...headers.map((header, index) => el('th', { class: numeric.has(index) ? 'num' : undefined }, header)))),
      el(
        'tbody',
        null,
        ...rows.map((cells) => el('tr', null, ...cells.map((cell, index) => el('td', { class: numeric.has(index) ? 'num' : undefined }, cell)))),
      ),
    ),
  );
}

function meter(used: number, limit: number): HTMLElement {
  const share = limit > 0 ? Math.min(1, used / limit) : 1;
  const bar = el('div');
  bar.style.width = `${(share * 100).toFixed(1)}%`;
  return el('div', { class: share >= 0.9 ? 'meter high' : 'meter', title: `${(share * 100).toFixed(1)}% used` }, bar);
}

export function limitsView(limits: Limits, names: Names, showAccount: boolean): HTMLElement {
  const scope = (accountId: string | null, keyId: string | null) =>
    keyId ? `Key ${names.key(keyId)}` : showAccount ? `Account ${names.account(accountId)}` : 'Account';
  const budgetRows = limits.budgets.map((budget) => {
    const usd = budget.unit === 'usd';
    const limit = (usd ? budget.usd : budget.tokens) ?? 0;
    const amount = usd ? formatUsd : formatInt;
    return [
      scope(budget.account_id, budget.key_id),
      budget.period,
      amount(limit),
      amount(budget.used),
      amount(budget.remaining),
      meter(budget.used, limit),
      budget.resets_at ? formatTime(budget.resets_at) : 'never',
    ];
  });
  const limitRows = limits.rate_limits.map((limit) => [
    scope(limit.account_id, limit.key_id),
    limit.rpm === null ? 'unlimited' : formatInt(limit.rpm),
    formatInt(limit.requests_last_minute),
    limit.tpm === null ? 'unlimited' : formatInt(limit.tpm),
    formatInt(limit.tokens_last_minute),
  ]);
  return el(
    'div',
    null,
    el('h3', { class: 'muted', style: 'font-size:13px;margin-bottom:6px' }, 'Budgets'),
    table(
      'budgets-table',
      ['Scope', 'Period', 'Limit', 'Used this period', 'Remaining', '', 'Resets'],
      budgetRows,
      new Set([2, 3, 4]),
      'No budgets: usage is not capped.',
    ),
    el('h3', { class: 'muted', style: 'font-size:13px;margin:14px 0 6px' }, 'Rate limits'),
    table(
      'rate-limits-table',
      ['Scope', 'Requests / min', 'Requests, last 60 s', 'Tokens / min', 'Tokens, last 60 s'],
      limitRows,
      new Set([1, 2, 3, 4]),
      'No rate limits.',
    ),
  );
}

export function recentView(records: RecentRecord[], names: Names, showAccount: boolean): HTMLElement {
  const rows = records.map((record) => {
    const failed = record.outcome !== 'success';
    const outcome = el('span', { class: `outcome ${failed ? 'fail' : 'success'}`, title: record.error_code ?? '' }, `${record.status} ${record.outcome}`);
    const cells: Child[] = [
      el('span', { title: record.created_at }, formatTime(record.created_at)),
      ...(showAccount ? [names.account(record.account_id)] : []),
      names.key(record.key_id),
      el('span', { class: 'mono' }, record.model || '—'),
      outcome,
      record.stream ? 'stream' : '—',
      formatInt(record.prompt_tokens),
      formatInt(record.completion_tokens),
      el(
        'span',
        { title: record.estimated ? 'estimated by the gateway' : 'reported by the vendor' },
        `${formatInt(record.total_tokens)}${record.estimated ? '*' : ''}`,
      ),
      formatUsd(record.cost_nano_usd === null ? null : record.cost_nano_usd / 1e9),
      formatMs(record.latency_ms),
      formatMs(record.ttft_ms),
    ];
    return cells;
  });
  const headers = [
    'Time',
    ...(showAccount ? ['Account'] : []),
    'Key',
    'Model',
    'Outcome',
    'Stream',
    'Prompt',
    'Completion',
    'Total',
    'Cost',
    'Latency',
    'TTFT',
  ];
  const offset = showAccount ? 1 : 0;
  const numeric = new Set([5, 6, 7, 8, 9, 10].map((index) => index + offset));
  return table('recent-table', headers, rows, numeric, 'No requests yet.');
}
