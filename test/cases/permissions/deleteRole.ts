import fc from 'fast-check';
import { badString, json } from '../../support/hostile';
import { fixture } from '../../support/hostileTarget';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'permissions.deleteRole',
  authz: [
    {
      input: (s) => ({ roleId: s.roleToDelete }),
      namesResource: true,
      effect: async (s, _, admin) => {
        expect((await admin.get('permissions.getRole', { roleId: s.roleToDelete })).status).toBe(
          404,
        );
      },
    },
  ],
  hostile: {
    base: () => [['roleId', json(fixture.roleId)]],
    alsoRequired: ['roleId'],
    breakers: () => ({ name: fc.oneof(badString(256), fc.constant('"fuzz fixture"')) }),
  },
  wire: {},
});
