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

/** The public names of v2's verification analytics, each a table of the ClickHouse database. */
export const VERIFICATION_TABLES = [
  'key_verifications_v1',
  'key_verifications_per_minute_v1',
  'key_verifications_per_hour_v1',
  'key_verifications_per_day_v1',
  'key_verifications_per_month_v1',
] as const;

/**
 * Unkey v2's analytics.getVerifications: the caller's SQL over the verification rows in
 * ClickHouse, limited to its workspace and, for a root key that reads some APIs only, to those
 * (`key_space_id`, the API's id in keyward). 412 without KEYWARD_CLICKHOUSE_READER_URL.
 */
export const queryVerifications = defineOperation({
  name: 'analytics.queryVerifications',
  method: 'POST',
  plane: 'management',
  summary:
    'SQL over the verification rows in ClickHouse (v2 analytics.getVerifications): one SELECT over key_verifications_v1 and its rollups, limited to the workspace and the APIs the root key may read.',
  // Unkey asks for api.*.read_analytics, or api.<id>.read_analytics for the APIs it may read.
  permission: { resource: 'api', action: 'read_analytics', scope: 'resource' },
  input: sqlQueryInput,
  output: sqlQueryOutput,
  uses: ['analyticsReader'],
  async handle(deps, caller, input: SqlQueryInput): Promise<SqlQueryOutput> {
    const reader = readerOr412(deps.analyticsReader);
    const scope = scopeOf(caller, VERIFICATION_TABLES, 'key_space_id', readableIds(caller, 'api'));
    return { data: await reader.query(input.query, scope) };
  },
});
