/** GET /v5/usage: the caller's own account usage, filtered by time and grouped by model, day or key. */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { formatUsd } from '../config/prices.js';
import type { Storage, UsageGroupBy, UsageReport } from '../storage/types.js';
import { callerOf } from './api-key-auth.js';
import { parseInput } from './parse-input.js';

/** An instant as ISO 8601, normalised to UTC with milliseconds. */
const isoInstant = (param: string) =>
  z
    .string()
    .refine((value) => !Number.isNaN(Date.parse(value)), { error: `'${param}' must be an ISO 8601 date or time.` })
    .transform((value) => new Date(value).toISOString());

export const usageQuerySchema = z.strictObject({
  since: isoInstant('since').optional(),
  until: isoInstant('until').optional(),
  group_by: z.enum(['model', 'day', 'key'], { error: "'group_by' must be one of model, day, key." }).optional(),
  format: z.enum(['json', 'csv'], { error: "'format' must be json or csv." }).optional(),
});

type UsageQuery = z.output<typeof usageQuerySchema>;

/** Reads a usage query (every message of its schema names the parameter). */
export function parseUsageQuery(query: unknown): UsageQuery {
  return parseInput(usageQuerySchema, query, 'query', true);
}

/** The report's counts, as the JSON fields and CSV columns name them, in order. */
const countColumns = [
  ['requests', 'requests'],
  ['prompt_tokens', 'promptTokens'],
  ['completion_tokens', 'completionTokens'],
  ['total_tokens', 'totalTokens'],
  ['cached_tokens', 'cachedTokens'],
  ['reasoning_tokens', 'reasoningTokens'],
  ['estimated_requests', 'estimatedRequests'],
  ['cost_usd', 'costNanoUsd'],
  ['unpriced_requests', 'unpricedRequests'],
] as const;

type Totals = UsageReport['totals'];

export function usageToCsv(report: UsageReport, groupBy: UsageGroupBy | undefined): string {
  // Dollars as exact decimal text: a spreadsheet reads it, and no float rounding creeps in.
  const cell = (totals: Totals, field: (typeof countColumns)[number][1]) => (field === 'costNanoUsd' ? formatUsd(totals.costNanoUsd) : totals[field]);
  const row = (name: string, totals: Totals) => [name, ...countColumns.map(([, field]) => cell(totals, field))];
  const rows = [
    [groupBy ?? 'group', ...countColumns.map(([column]) => column)],
    ...(groupBy ? report.groups : []).map((group) => row(group.group ?? '', group)),
    row('total', report.totals),
  ];
  return `${rows.map((cells) => cells.map(csvCell).join(',')).join('\n')}\n`;
}

function csvCell(value: string | number): string {
  const text = String(value);
  return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The counts as JSON fields (`cost_usd` in dollars); `first`: only that many of them (requests, then prompt, completion and total tokens). */
export function usageCounts(totals: Totals, first: number = countColumns.length): Record<string, number> {
  return Object.fromEntries(
    countColumns.slice(0, first).map(([column, field]) => [column, field === 'costNanoUsd' ? usdOf(totals.costNanoUsd) : totals[field]]),
  );
}

/** Nanodollars as a JSON number of dollars (the nearest double to the exact decimal). */
export function usdOf(nano: number): number {
  return Number(formatUsd(nano));
}

/** The report as the query asks for it: CSV, or the JSON usage object. */
export function answerUsage(reply: FastifyReply, accountId: string | null, query: UsageQuery, report: UsageReport) {
  const groupBy = query.group_by;
  if (query.format === 'csv') return reply.type('text/csv; charset=utf-8').send(usageToCsv(report, groupBy));
  return {
    object: 'usage',
    account_id: accountId,
    since: query.since ?? null,
    until: query.until ?? null,
    group_by: groupBy ?? null,
    data: groupBy ? report.groups.map((group) => ({ [groupBy]: group.group, ...usageCounts(group) })) : [],
    totals: usageCounts(report.totals),
  };
}

export function registerUsageRoute(app: FastifyInstance, storage: Storage): void {
  app.get('/v5/usage', async (request, reply) => {
    const query = parseUsageQuery(request.query);
    const accountId = callerOf(request).account.id;
    const report = await storage.queryUsage({ accountId, since: query.since, until: query.until, groupBy: query.group_by });
    return answerUsage(reply, accountId, query, report);
  });
}
