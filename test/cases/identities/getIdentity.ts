import fc from 'fast-check';
import { identityI } from '../../support/authzScene';
import { badQueryString } from '../../support/hostile';
import { fixture } from '../../support/hostileTarget';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'identities.getIdentity',
  authz: [
    {
      input: (s) => ({ identityId: s.identity }),
      lookup: identityI,
      effect: async (s, response) => expect(response.body.id).toBe(s.identity),
    },
    {
      variant: 'by externalId',
      input: (s) => ({ externalId: s.identityExternalId }),
      // A 403 would tell the id behind the externalId.
      lookup: { ...identityI, hidden: true },
      effect: async (s, response) => expect(response.body.id).toBe(s.identity),
    },
  ],
  hostile: {
    base: () => [['identityId', fixture.identityId]],
    // Neither identityId nor externalId: 400 too.
    alsoRequired: ['identityId'],
    breakers: () => ({
      // Both identityId and externalId: 400 whatever the externalId.
      externalId: fc.oneof(badQueryString(256), fc.constant(fixture.identityExternalId)),
    }),
  },
  wire: {},
});
