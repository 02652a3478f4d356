import { enc, field } from '../../support/wireScenario';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'apis.listApis',
  authz: [
    {
      input: () => ({}),
      effect: async (_, response) => expect(response.body.total).toEqual(expect.any(Number)),
    },
  ],
  hostile: { base: () => [['limit', '10']] },
  wire: {
    async pages(w) {
      const { c } = w;
      await c.get('listApis', 'apis.listApis', '');
      const page = await c.get('listApis: limit 2', 'apis.listApis', 'limit=2');
      await c.get(
        'listApis: limit 2, next page',
        'apis.listApis',
        `limit=2&cursor=${enc(field(page, 'cursor', 'listApis: limit 2'))}`,
      );
      await c.get('listApis: limit 0', 'apis.listApis', 'limit=0');
      await c.get('listApis: limit abc', 'apis.listApis', 'limit=abc');
      await c.get('listApis: limit 101', 'apis.listApis', 'limit=101');
    },
    async atTheEnd(w) {
      const { c } = w;
      await c.get('listApis at the end', 'apis.listApis', '');
    },
  },
});
