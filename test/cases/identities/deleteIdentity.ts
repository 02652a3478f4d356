import fc from 'fast-check';
import { badString, json } from '../../support/hostile';
import { fixture } from '../../support/hostileTarget';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'identities.deleteIdentity',
  authz: [
    {
      input: (s) => ({ identityId: s.identityToDelete }),
      lookup: { ids: (s) => [s.identityToDelete], elsewhere: 'not found' },
      effect: async (s, _, admin) => {
        const gone = await admin.get('identities.getIdentity', {
          identityId: s.identityToDelete,
        });
        expect(gone.status).toBe(404);
      },
    },
  ],
  hostile: {
    base: () => [['identityId', json(fixture.identityId)]],
    alsoRequired: ['identityId'],
    breakers: () => ({
      externalId: fc.oneof(badString(256), fc.constant(json(fixture.identityExternalId))),
    }),
  },
  wire: {},
});
