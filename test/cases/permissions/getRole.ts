import fc from 'fast-check';
import { badQueryString } from '../../support/hostile';
import { fixture } from '../../support/hostileTarget';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'permissions.getRole',
  authz: [
    {
      input: (s) => ({ roleId: s.role }),
      namesResource: true,
      effect: async (s, response) => expect(response.body.id).toBe(s.role),
    },
    {
      variant: 'by name',
      input: (s) => ({ name: `${s.nsN} reader` }),
      namesResource: true,
      effect: async (s, response) => expect(response.body.id).toBe(s.role),
    },
  ],
  hostile: {
    base: () => [['roleId', fixture.roleId]],
    alsoRequired: ['roleId'],
    breakers: () => ({ name: fc.oneof(badQueryString(256), fc.constant('fuzz fixture')) }),
  },
  wire: {},
});
