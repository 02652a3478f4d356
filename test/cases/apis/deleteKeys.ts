import { json, wrongType } from '../../support/hostile';
import { fixture } from '../../support/hostileTarget';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'apis.deleteKeys',
  authz: [
    {
      input: (s) => ({ apiId: s.apiA }),
      effect: async (s, response, admin) => {
        expect(response.body.deletedKeys).toEqual(expect.any(Number));
        expect((await admin.get('apis.listKeys', { apiId: s.apiA })).body.total).toBe(0);
      },
    },
  ],
  hostile: {
    base: () => [
      ['apiId', json(fixture.apiId)],
      ['permanent', 'false'],
    ],
    breakers: () => ({ permanent: wrongType(['boolean']) }),
  },
  wire: {},
});
