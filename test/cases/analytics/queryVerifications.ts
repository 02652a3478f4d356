import fc from 'fast-check';
import { defineCases } from '../types';

/** Where the suites run there is no ClickHouse: past the permission check, 412. */
const notConfigured = async (_: unknown, response: { body: Record<string, unknown> }) =>
  expect(response.body).toEqual({
    error: expect.objectContaining({
      code: 'PRECONDITION_FAILED',
      message: expect.stringContaining('KEYWARD_CLICKHOUSE_READER_URL'),
    }),
  });

export const cases = defineCases({
  operation: 'analytics.queryVerifications',
  authz: [
    {
      input: () => ({ query: 'SELECT count() AS total FROM key_verifications_v1' }),
      filtered: true,
      allowedStatus: 412,
      effect: notConfigured,
    },
  ],
  hostile: {
    base: () => [['query', JSON.stringify('SELECT count() AS total FROM key_verifications_v1')]],
    validStatus: 412,
    breakers: () => ({
      query: fc.constantFrom('""', '1', 'null', '["SELECT 1"]', JSON.stringify('x'.repeat(10_001))),
    }),
  },
  wire: {},
});
