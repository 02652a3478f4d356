import fc from 'fast-check';
import { badDescription, json, wrongType } from '../../support/hostile';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'permissions.createRole',
  authz: [
    {
      input: (s) => ({ name: `${s.nsN} new role` }),
      effect: async (_, response) =>
        expect(response.body).toEqual({ roleId: expect.stringMatching(/^role_/) }),
    },
  ],
  hostile: {
    base: () => [
      ['name', '"fuzz reader"'],
      ['description', '"reads"'],
    ],
    breakers: () => ({
      name: fc.oneof(
        wrongType(['string']),
        fc.constantFrom('""', '"ab"'),
        fc.integer({ min: 257, max: 100_000 }).map((n) => json('r'.repeat(n))),
      ),
      description: badDescription(),
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
