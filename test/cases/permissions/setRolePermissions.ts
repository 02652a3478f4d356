import fc from 'fast-check';
import { json, wrongType } from '../../support/hostile';
import { fixture } from '../../support/hostileTarget';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'permissions.setRolePermissions',
  authz: [
    {
      input: (s) => ({ roleId: s.role, permissions: [`${s.nsN}.read`] }),
      namesResource: true,
      effect: async (s, response, admin) => {
        expect(response.body).toEqual([expect.objectContaining({ id: s.permission })]);
        const got = await admin.get('permissions.getRole', { roleId: s.role });
        expect(got.body.permissions).toEqual([`${s.nsN}.read`]);
      },
    },
  ],
  hostile: {
    base: () => [
      ['roleId', json(fixture.roleId)],
      ['permissions', '["fuzz.fixture"]'],
    ],
    breakers: () => ({
      permissions: fc.oneof(
        wrongType(['array']),
        fc.constantFrom(
          '[5]',
          '["ab"]',
          '["has space"]',
          `[${Array.from({ length: 101 }, (_, i) => `"p.${i}"`).join(',')}]`,
        ),
      ),
    }),
  },
  wire: {},
});
