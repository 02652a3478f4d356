import { defineOperation } from '../operation';
import {
  readableIds,
  readerOr412,
  scopeOf,
  sqlQueryInput,
  sqlQueryOutput,
  type SqlQueryInput,
  type SqlQueryOutput,
} from './sqlAnalytics';

/** The public names of v2's rate-limit analytics, each a table of the ClickHouse database. */
export const RATELIMIT_TABLES = [
  'ratelimits_v1',
  'ratelimits_per_minute_v1',
  'ratelimits_per_hour_v1',
  'ratelimits_per_day_v1',
  'ratelimits_per_month_v1',
] as const;

/**
 * Unkey v2's analytics.getRatelimits: the caller's SQL over the standalone limits' rows in
 * ClickHouse, limited to its workspace and, for a root key that reads some namespaces only, to
 * those: `ratelimit.<id or name>.read_analytics`, each name resolved to its namespace's id
 * (`namespace_id`). 412 without KEYWARD_CLICKHOUSE_READER_URL.
 */
export const queryRatelimits = defineOperation({
  name: 'analytics.queryRatelimits',
  method: 'POST',
  plane: 'management',
  summary:
    'SQL over the standalone rate limits in ClickHouse (v2 analytics.getRatelimits): one SELECT over ratelimits_v1 and its rollups, limited to the workspace and the namespaces the root key may read.',
  // Unkey asks for ratelimit.*.read_analytics, or ratelimit.<namespace>.read_analytics.
  permission: { resource: 'ratelimit', action: 'read_analytics', scope: 'resource' },
  input: sqlQueryInput,
  output: sqlQueryOutput,
  uses: ['analyticsReader', 'directory'],
  async handle(deps, caller, input: SqlQueryInput): Promise<SqlQueryOutput> {
    const reader = readerOr412(deps.analyticsReader);
    const named = readableIds(caller, 'ratelimit');
    let ids: string[] | undefined;
    if (named) {
      // A permission names a namespace by its id or its name: both read as its id.
      ids = [...named];
      for (const name of named) {
        const namespace = await deps.directory.namespace(caller.rootKey.workspaceId, name);
        if (namespace) ids.push(namespace.id);
      }
    }
    const scope = scopeOf(caller, RATELIMIT_TABLES, 'namespace_id', ids);
    return { data: await reader.query(input.query, scope) };
  },
});
