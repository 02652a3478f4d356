import { AnalyticsNotConfiguredError } from '../../../errors';
import { getAnalyticsVerifications } from '../../../operations/analytics/getVerifications';
import { object } from '../../../operations/schemas';
import { defineV2Route, open } from '../route';

/**
 * v2's analytics run the caller's SQL against Unkey's ClickHouse. keyward keeps no such store,
 * so it answers as Unkey does where analytics are not configured: 412, type
 * `…/unkey/data/analytics_not_configured` (errors.ts), naming what keyward offers instead.
 */
export const v2GetVerifications = defineV2Route({
  name: 'analytics.getVerifications',
  operation: getAnalyticsVerifications,
  // Unkey's spec leaves this body open.
  input: open(object({ query: { type: 'string', minLength: 1 } }, ['query'])),
  output: { type: 'array', items: { type: 'object' } },
  toInput(): never {
    throw new AnalyticsNotConfiguredError(
      'analytics are not configured: keyward keeps no verification store to run SQL against. ' +
        'Verification counts by time, key, identity and tags: GET /v1/analytics.getVerifications; ' +
        "a key's daily counts: GET /v1/keys.getVerifications?keyId=…",
    );
  },
  toBody: () => ({ data: [] }),
});
