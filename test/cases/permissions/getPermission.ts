import fc from 'fast-check';
import { badQueryString } from '../../support/hostile';
import { fixture } from '../../support/hostileTarget';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'permissions.getPermission',
  authz: [
    {
      input: (s) => ({ permissionId: s.permission }),
      namesResource: true,
      effect: async (s, response) => expect(response.body.id).toBe(s.permission),
    },
    {
      variant: 'by name',
      input: (s) => ({ name: `${s.nsN}.read` }),
      namesResource: true,
      effect: async (s, response) => expect(response.body.id).toBe(s.permission),
    },
  ],
  hostile: {
    base: () => [['permissionId', fixture.permissionId]],
    // Neither permissionId nor name: 400 too.
    alsoRequired: ['permissionId'],
    // Both permissionId and name: 400 whatever the name.
    breakers: () => ({ name: fc.oneof(badQueryString(256), fc.constant('fuzz.fixture')) }),
  },
  wire: {},
});
