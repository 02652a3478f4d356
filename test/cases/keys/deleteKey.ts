import { keyOfA } from '../../support/authzScene';
import { json } from '../../support/hostile';
import { fixture } from '../../support/hostileTarget';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'keys.deleteKey',
  authz: [
    {
      input: (s) => ({ keyId: s.key2.keyId }),
      lookup: keyOfA,
      effect: async (s, _, admin) => {
        expect((await admin.get('keys.getKey', { keyId: s.key2.keyId })).status).toBe(404);
      },
    },
  ],
  hostile: { base: () => [['keyId', json(fixture.keyId)]] },
  wire: {
    async deletes(w) {
      const { c } = w;
      const k1 = w.got('k1');
      const kB = w.got('kB');
      await c.post('deleteKey kB', 'keys.deleteKey', { keyId: kB.keyId });
      await w.verify('NOT_FOUND after deleteKey', { key: kB.key });
      await c.get('getKey: deleted key', 'keys.getKey', `keyId=${kB.keyId}`);
      await c.post('deleteKey kB again', 'keys.deleteKey', { keyId: kB.keyId });
      await c.post('deleteKey: missing keyId', 'keys.deleteKey', {});
      await c.post(
        'deleteKey: 403 narrow root key',
        'keys.deleteKey',
        { keyId: k1.keyId },
        { auth: 'narrow' },
      );
    },
  },
});
