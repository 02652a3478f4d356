import { queryVerifications } from '../../../operations/analytics/queryVerifications';
import { sqlQueryOutput } from '../../../operations/analytics/sqlAnalytics';
import { defineV2Route, open } from '../route';

/**
 * v2's analytics.getVerifications: the caller's SQL over the verification rows in ClickHouse
 * (src/analytics/clickhouse/sqlQuery.ts), answered `{meta, data: [rows]}`. Without
 * KEYWARD_CLICKHOUSE_READER_URL it answers as Unkey does where analytics are not configured:
 * 412, type `…/unkey/data/analytics_not_configured`.
 */
export const v2GetVerifications = defineV2Route({
  name: 'analytics.getVerifications',
  operation: queryVerifications,
  // Unkey's spec leaves this body open.
  input: open(queryVerifications.input),
  output: sqlQueryOutput.properties.data,
  toInput: (body: { query: string }) => ({ query: body.query }),
  toBody: (output) => ({ data: output.data }),
});
