import type { QueryScope } from '../../analytics/clickhouse/sqlQuery';
import { AnalyticsNotConfiguredError } from '../../errors';
import type { AnalyticsReader } from '../../analytics/clickhouse/reader';
import type { Caller, Resource } from '../operation';
import { object } from '../schemas';

/** The body of a SQL analytics call: one SELECT, bounded (docs/limits.md). */
export const QUERY_MAX_LENGTH = 10_000;

export const sqlQueryInput = object(
  { query: { type: 'string', minLength: 1, maxLength: QUERY_MAX_LENGTH } },
  ['query'],
);

export const sqlQueryOutput = {
  type: 'object',
  required: ['data'],
  properties: { data: { type: 'array', items: { type: 'object' } } },
} as const;

export interface SqlQueryInput {
  query: string;
}

/** What v2's analytics answer: the query's rows, each a JSON object of its columns. */
export interface SqlQueryOutput {
  data: Record<string, unknown>[];
}

/**
 * The ids the caller may read analytics of: undefined for all of them (`<resource>.*.
 * read_analytics` or `*`), else those its permissions name one by one, as Unkey reads
 * `api.<id>.read_analytics`.
 */
export function readableIds(caller: Caller, resource: Resource): string[] | undefined {
  const ids: string[] = [];
  for (const permission of caller.rootKey.permissions) {
    if (permission === '*') return undefined;
    const first = permission.indexOf('.');
    const last = permission.lastIndexOf('.');
    if (permission.slice(0, first) !== resource) continue;
    if (permission.slice(last + 1) !== 'read_analytics') continue;
    const id = permission.slice(first + 1, last);
    if (id === '*') return undefined;
    ids.push(id);
  }
  return ids;
}

/** The reader, or the 412 Unkey answers where analytics are not configured. */
export function readerOr412(reader: AnalyticsReader | undefined): AnalyticsReader {
  if (reader) return reader;
  throw new AnalyticsNotConfiguredError(
    'SQL analytics are not configured: they need ClickHouse (KEYWARD_CLICKHOUSE_URL and ' +
      'KEYWARD_CLICKHOUSE_READER_URL, docs/deploy.md). Without it, verification counts by time, ' +
      'key, identity and tags: GET /v1/analytics.getVerifications; ' +
      "a key's daily counts: GET /v1/keys.getVerifications?keyId=…",
  );
}

/** The workspace filter, and the per-id one when the caller may read only some ids. */
export function scopeOf(
  caller: Caller,
  tables: readonly string[],
  column: string,
  ids: readonly string[] | undefined,
): QueryScope {
  return {
    tables: new Set(tables),
    filters: [
      { column: 'workspace_id', values: caller.rootKey.workspaceId },
      ...(ids ? [{ column, values: ids }] : []),
    ],
  };
}
