import fc from 'fast-check';
import { identityI } from '../../support/authzScene';
import { badMeta, badNamedLimits, badRefill, badString, json } from '../../support/hostile';
import { fixture } from '../../support/hostileTarget';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'identities.updateIdentity',
  authz: [
    {
      input: (s) => ({ identityId: s.identity, meta: { by: 'id' } }),
      lookup: identityI,
      effect: async (s, response, admin) => {
        expect(response.body.meta).toEqual({ by: 'id' });
        const got = await admin.get('identities.getIdentity', { identityId: s.identity });
        expect(got.body.meta).toEqual({ by: 'id' });
      },
    },
    {
      variant: 'by externalId',
      input: (s) => ({ externalId: s.identityExternalId, meta: { by: 'externalId' } }),
      lookup: { ...identityI, hidden: true },
      effect: async (s, _, admin) => {
        const got = await admin.get('identities.getIdentity', { identityId: s.identity });
        expect(got.body.meta).toEqual({ by: 'externalId' });
      },
    },
  ],
  hostile: {
    base: () => [
      ['identityId', json(fixture.identityId)],
      ['meta', '{"plan":"pro"}'],
      ['ratelimits', '[{"name":"requests","limit":10,"duration":1000}]'],
    ],
    alsoRequired: ['identityId'],
    breakers: () => ({
      refill: badRefill(),
      externalId: fc.oneof(badString(256), fc.constant(json(fixture.identityExternalId))),
      // A new name is held to createIdentity's bounds: 3–256 characters.
      newExternalId: fc.oneof(badString(256), fc.constantFrom('"a"', '"ab"')),
      meta: badMeta(),
      ratelimits: badNamedLimits({ twiceIsConflict: true }),
    }),
  },
  wire: {},
});
