import fc from 'fast-check';
import { identityI } from '../../support/authzScene';
import { badString, json, wrongType } from '../../support/hostile';
import { fixture } from '../../support/hostileTarget';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'identities.updateCredits',
  authz: [
    {
      input: (s) => ({ identityId: s.identity, op: 'set', value: 7 }),
      lookup: identityI,
      effect: async (s, response, admin) => {
        expect(response.body).toEqual({ remaining: 7 });
        const got = await admin.get('identities.getIdentity', { identityId: s.identity });
        expect(got.body.remaining).toBe(7);
      },
    },
  ],
  hostile: {
    base: () => [
      ['identityId', json(fixture.identityId)],
      ['op', '"set"'],
      ['value', '10'],
    ],
    alsoRequired: ['identityId'],
    breakers: () => ({
      externalId: fc.oneof(badString(256), fc.constant(json(fixture.identityExternalId))),
      op: fc.oneof(wrongType(['string']), fc.constantFrom('"add"', '"SET"', '""', '"set "')),
    }),
  },
  wire: {},
});
