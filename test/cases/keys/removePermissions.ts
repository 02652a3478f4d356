import { badLinks, json } from '../../support/hostile';
import { fixture } from '../../support/hostileTarget';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'keys.removePermissions',
  authz: [
    {
      input: (s) => ({ keyId: s.key1.keyId, permissions: [{ id: s.permission }] }),
      namesResource: true,
      effect: async (s, _, admin) => {
        const held = (await admin.get('keys.getKey', { keyId: s.key1.keyId })).body.permissions;
        expect(held ?? []).toEqual([]);
      },
    },
  ],
  hostile: {
    base: () => [
      ['keyId', json(fixture.keyId)],
      ['permissions', `[{"name":"fuzz.permissions","create":true}]`],
    ],
    breakers: () => ({ permissions: badLinks(1) }),
  },
  wire: {},
});
