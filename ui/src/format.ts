/** Number and time formatting shared by the pages. */
const integer = new Intl.NumberFormat('en-US');

export function formatInt(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : integer.format(value);
}

/** US dollars: cents for sums of a dollar or more, up to six decimals below that. */
export function formatUsd(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  if (value === 0) return '$0';
  return Math.abs(value) >= 1
    ? `$${value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`
    : `$${Number(value.toPrecision(4))}`;
}

export function formatMs(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return value < 1000 ? `${value.toFixed(value < 10 ? 1 : 0)} ms` : `${(value / 1000).toFixed(2)} s`;
}

export function formatTime(iso: string): string {
  const date = new Date(iso);
  return date.toLocaleString('en-GB', { month: 'short', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/** Label for a series bucket: `Dec 02` for days, `14:00` for hours (UTC, as the buckets are). */
export function bucketLabel(iso: string, bucket: 'day' | 'hour'): string {
  const date = new Date(iso);
  return bucket === 'hour'
    ? `${String(date.getUTCHours()).padStart(2, '0')}:00`
    : date.toLocaleDateString('en-GB', { month: 'short', day: '2-digit', timeZone: 'UTC' });
}
