import { queryRatelimits } from '../../../operations/analytics/queryRatelimits';
import { sqlQueryOutput } from '../../../operations/analytics/sqlAnalytics';
import { defineV2Route, open } from '../route';

/**
 * v2's analytics.getRatelimits: the caller's SQL over the standalone limits' rows in ClickHouse,
 * answered `{meta, data: [rows]}`; 412 without KEYWARD_CLICKHOUSE_READER_URL.
 */
export const v2GetRatelimits = defineV2Route({
  name: 'analytics.getRatelimits',
  operation: queryRatelimits,
  // Unkey's spec leaves this body open.
  input: open(queryRatelimits.input),
  output: sqlQueryOutput.properties.data,
  toInput: (body: { query: string }) => ({ query: body.query }),
  toBody: (output) => ({ data: output.data }),
});
