import { fixture } from '../../support/hostileTarget';
import { FIXED_IDS } from '../../support/wireScenario';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'apis.getApi',
  authz: [
    {
      input: (s) => ({ apiId: s.apiA }),
      effect: async (s, response) => expect(response.body.id).toBe(s.apiA),
    },
  ],
  hostile: { base: () => [['apiId', fixture.apiId]] },
  wire: {
    async reads(w) {
      const { c, context } = w;
      const apiA = w.got('apiA');
      const apiB = w.got('apiB');
      await c.get('getApi A', 'apis.getApi', `apiId=${apiA}`);
      await c.get('getApi: unknown id', 'apis.getApi', 'apiId=api_missing');
      await c.get('getApi: well-formed unknown id', 'apis.getApi', `apiId=${FIXED_IDS[0]}`);
      await c.get('getApi: no apiId', 'apis.getApi', '');
      await c.get('getApi: apiId twice', 'apis.getApi', `apiId=${apiA}&apiId=${apiB}`);
      await c.get('getApi: 65-character apiId', 'apis.getApi', `apiId=${'a'.repeat(65)}`);
      await c.send('HEAD getApi: unknown id', {
        method: 'HEAD',
        path: '/v1/apis.getApi?apiId=api_missing',
        headers: { authorization: `Bearer ${context.rootKey}` },
      });
      await c.get('getApi: another workspace sees 404', 'apis.getApi', `apiId=${apiA}`, {
        auth: 'other_ws',
      });
    },
  },
});
