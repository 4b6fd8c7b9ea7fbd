/** The usage dashboard: totals, usage charts by model and by key, limits, recent requests. */
import './styles.css';
import type { Chart } from 'chart.js';
import { ApiError, clearSession, loadSession, type Session } from './api.js';
import { listAccounts, loadDashboard, type Account, type Bucket, type DashboardData } from './dashboard-data.js';
import { limitsView, namesFor, recentView } from './dashboard-tables.js';
import { byId, el } from './dom.js';
import { formatInt, formatUsd } from './format.js';
import { renderSessionBadge, renderSignIn } from './session-header.js';
import { createUsageChart, datasetsFor, updateUsageChart, type Metric } from './usage-charts.js';

declare global {
  interface Window {
    /** For debugging in the console and for the browser tests. */
    tollgate?: { charts: Record<'model' | 'key', Chart<'bar'>>; data: DashboardData | null };
  }
}

const statFields: [keyof DashboardData['totals'], string][] = [
  ['requests', 'Requests'],
  ['prompt_tokens', 'Prompt tokens'],
  ['completion_tokens', 'Completion tokens'],
  ['total_tokens', 'Total tokens'],
  ['cached_tokens', 'Cached tokens'],
  ['estimated_requests', 'Estimated requests'],
  ['cost_usd', 'Cost (USD)'],
];

function select(id: string, label: string, options: [string, string][]): { wrapper: HTMLElement; input: HTMLSelectElement } {
  const input = el('select', { id }, ...options.map(([value, text]) => el('option', { value }, text)));
  return { wrapper: el('label', null, label, input), input };
}

async function renderDashboard(app: HTMLElement, session: Session): Promise<void> {
  const admin = session.role === 'admin';
  const accounts: Account[] = admin ? await listAccounts(session) : [];
  const accountPicker = select('account-picker', 'Account', [['', 'All accounts'], ...accounts.map((account): [string, string] => [account.id, account.name])]);
  const rangePicker = select('range-picker', 'Range', [
    ['day', 'Last 14 days, daily'],
    ['hour', 'Last 24 hours, hourly'],
  ]);
  const metricPicker = select('metric-picker', 'Show', [
    ['total_tokens', 'Tokens'],
    ['requests', 'Requests'],
    ['cost_usd', 'Cost (USD)'],
  ]);
  const refresh = el('button', { type: 'button', id: 'refresh' }, 'Refresh');
  const status = el('span', { class: 'status', id: 'dashboard-status' });
  const error = el('div', { class: 'error-box', id: 'dashboard-error' });
  const errorCard = el('div', { class: 'card', hidden: true }, error);

  const stats = el(
    'section',
    { class: 'stats', id: 'totals' },
    ...statFields.map(([field, label]) =>
      el('div', { class: 'stat' }, el('div', { class: 'label' }, label), el('div', { class: 'value', 'data-field': field }, '—')),
    ),
  );
  const modelCanvas = el('canvas', { id: 'chart-model', role: 'img', 'aria-label': 'Usage by model' });
  const keyCanvas = el('canvas', { id: 'chart-key', role: 'img', 'aria-label': 'Usage by key' });
  const modelTitle = el('h2', { id: 'chart-model-title' }, 'By model');
  const keyTitle = el('h2', null, 'By key');
  const limitsCard = el('section', { class: 'card', id: 'limits' }, el('h2', null, 'Budgets and rate limits'));
  const recentCard = el('section', { class: 'card', id: 'recent' }, el('h2', null, 'Recent requests'));

  app.replaceChildren(
    el(
      'div',
      { class: 'grid' },
      el('div', { class: 'toolbar' }, admin ? accountPicker.wrapper : null, rangePicker.wrapper, metricPicker.wrapper, refresh, status),
      errorCard,
      stats,
      el('section', { class: 'card half' }, modelTitle, el('div', { class: 'chart-box' }, modelCanvas)),
      el('section', { class: 'card half' }, keyTitle, el('div', { class: 'chart-box' }, keyCanvas)),
      limitsCard,
      recentCard,
    ),
  );
  const charts = { model: createUsageChart(modelCanvas), key: createUsageChart(keyCanvas) };
  const exposed: NonNullable<Window['tollgate']> = { charts, data: null };
  window.tollgate = exposed;

  let data: DashboardData | null = null;
  const draw = () => {
    if (!data) return;
    const metric = metricPicker.input.value as Metric;
    const names = namesFor(accounts, data.limits.keys);
    const showAccount = admin && accountPicker.input.value === '';
    for (const [field] of statFields) {
      const value = stats.querySelector(`[data-field="${field}"]`);
      if (!value) throw new Error(`The totals card has no ${field} field.`);
      value.textContent = field === 'cost_usd' ? costText(data.totals) : formatInt(data.totals[field]);
    }
    const unit = { requests: 'Requests', total_tokens: 'Tokens', cost_usd: 'Cost' }[metric];
    modelTitle.textContent = `${unit} by model`;
    keyTitle.textContent = `${unit} by key`;
    updateUsageChart(
      charts.model,
      data.series,
      datasetsFor(data.series, 'by_model', metric, (group) => group || '(no model)'),
      metric,
    );
    updateUsageChart(charts.key, data.series, datasetsFor(data.series, 'by_key', metric, names.key), metric);
    limitsCard.replaceChildren(el('h2', null, 'Budgets and rate limits'), limitsView(data.limits, names, showAccount));
    recentCard.replaceChildren(el('h2', null, 'Recent requests'), recentView(data.recent, names, showAccount));
  };
  const load = async () => {
    refresh.disabled = true;
    status.textContent = 'Loading…';
    try {
      data = await loadDashboard(session, accountPicker.input.value, rangePicker.input.value as Bucket);
      exposed.data = data;
      errorCard.hidden = true;
      draw();
      status.textContent = `Updated ${new Date().toLocaleTimeString('en-GB')}`;
      app.dataset.loaded = String(Number(app.dataset.loaded ?? 0) + 1);
    } catch (caught) {
      if (caught instanceof ApiError && caught.status === 401) {
        clearSession();
        location.reload();
        return;
      }
      error.textContent = caught instanceof Error ? caught.message : String(caught);
      errorCard.hidden = false;
      status.textContent = '';
    } finally {
      refresh.disabled = false;
    }
  };
  accountPicker.input.addEventListener('change', load);
  rangePicker.input.addEventListener('change', load);
  metricPicker.input.addEventListener('change', draw);
  refresh.addEventListener('click', load);
  await load();
}

async function main(): Promise<void> {
  const app = byId('app');
  const slot = byId('session');
  let session = loadSession();
  if (!session) session = await renderSignIn(app, 'Use an API key to see your account, or the admin key to see every account.');
  renderSessionBadge(slot, session);
  await renderDashboard(app, session);
}

void main();

/** The cost, saying how many requests it leaves out for want of a price. */
function costText(totals: DashboardData['totals']): string {
  const unpriced = totals.unpriced_requests;
  return unpriced > 0 ? `${formatUsd(totals.cost_usd)} + ${formatInt(unpriced)} unpriced` : formatUsd(totals.cost_usd);
}
