import fc from 'fast-check';
import { badMeta, badNamedLimits, badRefill, badString } from '../../support/hostile';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'identities.createIdentity',
  authz: [
    {
      // In the caller's own workspace, whichever that is (as createApi).
      input: (s) => ({ externalId: `${s.nsN}.new` }),
      effect: async (_, response) =>
        expect(response.body).toEqual({ identityId: expect.stringMatching(/^id_/) }),
    },
  ],
  hostile: {
    base: () => [
      ['externalId', '"fuzz-created-user"'],
      ['meta', '{"plan":"pro"}'],
      ['ratelimits', '[{"name":"requests","limit":10,"duration":1000}]'],
    ],
    breakers: () => ({
      refill: badRefill(),
      // 3–256 characters, as Unkey v1 asks.
      externalId: fc.oneof(badString(256), fc.constantFrom('"a"', '"ab"')),
      meta: badMeta(),
      ratelimits: badNamedLimits(),
    }),
  },
  wire: {},
});
