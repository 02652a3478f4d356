import { keyOfA } from '../../support/authzScene';
import { fixture } from '../../support/hostileTarget';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'keys.getBucket',
  authz: [
    {
      input: (s) => ({ keyId: s.key1.keyId }),
      lookup: keyOfA,
      effect: async (_, response) => expect(response.body).toEqual({}),
    },
  ],
  hostile: { base: () => [['keyId', fixture.keyId]] },
  wire: {
    async buckets(w) {
      const { c } = w;
      const k2 = w.got('k2');
      const k3 = w.got('k3');
      const k4 = w.got('k4');
      const k5 = w.got('k5');
      await c.get(
        'getBucket k2: consistent, credits removed',
        'keys.getBucket',
        `keyId=${k2.keyId}`,
      );
      await c.get('getBucket k3: fast', 'keys.getBucket', `keyId=${k3.keyId}`);
      await c.get('getBucket k4: credits only', 'keys.getBucket', `keyId=${k4.keyId}`);
      await c.get('getBucket k5: no limits', 'keys.getBucket', `keyId=${k5.keyId}`);
      await c.get('getBucket: unknown id', 'keys.getBucket', 'keyId=key_missing');
    },
  },
});
