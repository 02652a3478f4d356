import fc from 'fast-check';
import { badString, json } from '../../support/hostile';
import { fixture } from '../../support/hostileTarget';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'permissions.deletePermission',
  authz: [
    {
      input: (s) => ({ permissionId: s.permissionToDelete }),
      namesResource: true,
      effect: async (s, _, admin) => {
        const gone = await admin.get('permissions.getPermission', {
          permissionId: s.permissionToDelete,
        });
        expect(gone.status).toBe(404);
      },
    },
  ],
  hostile: {
    base: () => [['permissionId', json(fixture.permissionId)]],
    alsoRequired: ['permissionId'],
    breakers: () => ({ name: fc.oneof(badString(256), fc.constant('"fuzz.fixture"')) }),
  },
  wire: {},
});
