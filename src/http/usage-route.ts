/** GET /v5/usage: the caller's own account usage, filtered by time and grouped by model, day or key. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Storage, UsageGroupBy, UsageReport } from '../storage/types.js';
import { invalidRequest, storageUnavailable } from '../errors/gateway-error.js';
import { callerOf } from './api-key-auth.js';

const isoInstant = (param: string) => z.string().refine((value) => !Number.isNaN(Date.parse(value)), { error: `'${param}' must be an ISO 8601 date or time.` });

export const usageQuerySchema = z.strictObject({
  since: isoInstant('since').optional(),
  until: isoInstant('until').optional(),
  group_by: z.enum(['model', 'day', 'key'], { error: "'group_by' must be one of model, day, key." }).optional(),
  format: z.enum(['json', 'csv'], { error: "'format' must be json or csv." }).optional(),
});

export interface ParsedUsageQuery {
  since?: string;
  until?: string;
  groupBy?: UsageGroupBy;
  format: 'json' | 'csv';
}

export function parseUsageQuery(query: unknown): ParsedUsageQuery {
  const result = usageQuerySchema.safeParse(query ?? {});
  if (!result.success) {
    const issue = result.error.issues[0];
    if (issue.code === 'unrecognized_keys') throw invalidRequest(`Unknown query parameter '${issue.keys[0]}'.`, issue.keys[0], 'unknown_parameter');
    throw invalidRequest(issue.message, String(issue.path[0] ?? ''), 'invalid_value');
  }
  const { since, until, group_by: groupBy, format } = result.data;
  return {
    since: since ? new Date(since).toISOString() : undefined,
    until: until ? new Date(until).toISOString() : undefined,
    groupBy,
    format: format ?? 'json',
  };
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
] as const;

type Totals = UsageReport['totals'];

export function usageToCsv(report: UsageReport, groupBy: UsageGroupBy | undefined): string {
  const row = (name: string, totals: Totals) => [name, ...countColumns.map(([, field]) => totals[field])];
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

export function usageToJson(accountId: string | null, query: ParsedUsageQuery, report: UsageReport) {
  const groupBy = query.groupBy;
  const row = (totals: Totals) => Object.fromEntries(countColumns.map(([column, field]) => [column, totals[field]]));
  return {
    object: 'usage',
    account_id: accountId,
    since: query.since ?? null,
    until: query.until ?? null,
    group_by: groupBy ?? null,
    data: groupBy ? report.groups.map((group) => ({ [groupBy]: group.group, ...row(group) })) : [],
    totals: row(report.totals),
  };
}

export function registerUsageRoute(app: FastifyInstance, storage: Storage): void {
  app.get('/v5/usage', async (request, reply) => {
    const query = parseUsageQuery(request.query);
    const accountId = callerOf(request).account.id;
    const report = await storage.queryUsage({ accountId, since: query.since, until: query.until, groupBy: query.groupBy }).catch((error: unknown) => {
      throw storageUnavailable(error);
    });
    if (query.format === 'csv') return reply.type('text/csv; charset=utf-8').send(usageToCsv(report, query.groupBy));
    return usageToJson(accountId, query, report);
  });
}
