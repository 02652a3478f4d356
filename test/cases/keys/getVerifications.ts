import fc from 'fast-check';
import { keyOfA } from '../../support/authzScene';
import { badQueryString } from '../../support/hostile';
import { fixture } from '../../support/hostileTarget';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'keys.getVerifications',
  authz: [
    {
      input: (s) => ({ keyId: s.key1.keyId }),
      lookup: keyOfA,
      effect: async (_, response) => expect(response.body.verifications).toEqual(expect.any(Array)),
    },
  ],
  hostile: {
    base: () => [['keyId', fixture.keyId]],
    breakers: () => ({
      keyId: badQueryString(64),
      ownerId: badQueryString(256),
      start: fc.constantFrom('-1', 'yesterday', '1.5'),
      end: fc.constantFrom('-1', 'now', '1e3'),
      granularity: fc.constantFrom('hour', 'month', ''),
    }),
  },
  wire: {},
});
