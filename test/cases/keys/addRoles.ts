import { badLinks, json } from '../../support/hostile';
import { fixture } from '../../support/hostileTarget';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'keys.addRoles',
  authz: [
    {
      input: (s) => ({ keyId: s.key1.keyId, roles: [{ id: s.role }] }),
      namesResource: true,
      effect: async (s, _, admin) => {
        const held = (await admin.get('keys.getKey', { keyId: s.key1.keyId })).body.roles;
        expect(held ?? []).toEqual([expect.any(String)]);
      },
    },
  ],
  hostile: {
    base: () => [
      ['keyId', json(fixture.keyId)],
      ['roles', `[{"name":"fuzz.roles","create":true}]`],
    ],
    breakers: () => ({ roles: badLinks(1) }),
  },
  wire: {},
});
