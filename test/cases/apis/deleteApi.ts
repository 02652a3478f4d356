import { json } from '../../support/hostile';
import { fixture } from '../../support/hostileTarget';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'apis.deleteApi',
  authz: [
    {
      input: (s) => ({ apiId: s.apiA }),
      effect: async (s, _, admin) => {
        expect((await admin.get('apis.getApi', { apiId: s.apiA })).status).toBe(404);
      },
    },
  ],
  hostile: { base: () => [['apiId', json(fixture.apiId)]] },
  wire: {
    async deletes(w) {
      const { c } = w;
      const apiA = w.got('apiA');
      const apiB = w.got('apiB');
      const k2 = w.got('k2');
      await c.post(
        'deleteApi: 403 narrow root key',
        'apis.deleteApi',
        { apiId: apiB },
        { auth: 'narrow' },
      );
      await c.post('deleteApi B', 'apis.deleteApi', { apiId: apiB });
      await c.post('deleteApi B again', 'apis.deleteApi', { apiId: apiB });
      await c.get('getApi B after delete', 'apis.getApi', `apiId=${apiB}`);
      await c.get('listKeys B after delete', 'apis.listKeys', `apiId=${apiB}`);
      await c.post('createKey in the deleted API', 'keys.createKey', { apiId: apiB });
      await c.post('deleteApi: missing apiId', 'apis.deleteApi', {});
      await c.post('deleteApi: unknown apiId', 'apis.deleteApi', { apiId: 'api_missing' });
      await c.post('deleteApi A', 'apis.deleteApi', { apiId: apiA });
      await w.verify('NOT_FOUND after deleteApi', { key: k2.key });
      await c.get('getKey after deleteApi', 'keys.getKey', `keyId=${k2.keyId}`);
    },
  },
});
