import fc from 'fast-check';
import { binaryString } from '../../support/hostile';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'identities.listIdentities',
  authz: [
    {
      // The caller's own workspace's, whichever that is (as listApis); `default` when unnamed.
      input: () => ({}),
      workspaceWide: true,
      effect: async (_, response) => expect(response.body.total).toEqual(expect.any(Number)),
    },
    {
      variant: 'of another environment',
      input: () => ({ environment: 'staging' }),
      workspaceWide: true,
      effect: async (_, response) => expect(response.body).toEqual({ identities: [], total: 0 }),
    },
  ],
  hostile: {
    base: () => [['limit', '10']],
    // A blank search lists everything, as Unkey's does: only a longer one is refused.
    breakers: () => ({
      search: fc.oneof(
        binaryString(257, 260),
        fc.integer({ min: 257, max: 6_000 }).map((n) => 'x'.repeat(n)),
      ),
    }),
  },
  wire: {},
});
