/** The usage report on SQLite: totals, optionally grouped by model, day or key, within a time window. */
import type Database from 'better-sqlite3';
import type { UsageQuery, UsageReport } from '../types.js';
import { rowToGroup, rowToTotals, usageAggregateSelect, type AggregateRow } from '../usage-row.js';

const groupExpressions = { model: 'model', day: 'substr(created_at, 1, 10)', key: 'key_id' } as const;

export function queryUsage(db: Database.Database, query: UsageQuery): UsageReport {
  const clauses: string[] = [];
  const values: unknown[] = [];
  if (query.accountId) {
    clauses.push('account_id = ?');
    values.push(query.accountId);
  }
  if (query.since) {
    clauses.push('created_at >= ?');
    values.push(storedInstant(query.since));
  }
  if (query.until) {
    clauses.push('created_at < ?');
    values.push(storedInstant(query.until));
  }
  const where = clauses.length ? `WHERE ${clauses.join(' AND ')}` : '';
  const totals = rowToTotals(db.prepare(`SELECT ${usageAggregateSelect} FROM usage_records ${where}`).get(...values) as AggregateRow);
  if (!query.groupBy) return { groups: [], totals };
  const expression = groupExpressions[query.groupBy];
  const rows = db
    .prepare(`SELECT ${expression} AS group_value, ${usageAggregateSelect} FROM usage_records ${where} GROUP BY ${expression} ORDER BY ${expression}`)
    .all(...values) as AggregateRow[];
  return { groups: rows.map(rowToGroup), totals };
}

/**
 * Times are stored as `toISOString()` text, which compares correctly only with text of that exact
 * shape, so a bound like `…T00:00:00Z` or `…+09:00` is rewritten first. A time without an offset is
 * UTC, as on PostgreSQL; text that is not a date is left as it is.
 */
export function storedInstant(iso: string): string {
  const zoned = !iso.includes('T') || /T.*(?:Z|[+-]\d\d(?::?\d\d)?)$/i.test(iso) ? iso : `${iso}Z`;
  const time = Date.parse(zoned);
  return Number.isNaN(time) ? iso : new Date(time).toISOString();
}
