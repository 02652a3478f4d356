import { keyOfA } from '../../support/authzScene';
import { badQueryBoolean, badQueryString } from '../../support/hostile';
import { fixture } from '../../support/hostileTarget';
import { FIXED_IDS } from '../../support/wireScenario';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'keys.getKey',
  authz: [
    {
      input: (s) => ({ keyId: s.key1.keyId }),
      lookup: keyOfA,
      effect: async (s, response) => expect(response.body.id).toBe(s.key1.keyId),
    },
    {
      variant: 'with decrypt',
      input: (s) => ({ keyId: s.key1.keyId, decrypt: true }),
      lookup: keyOfA,
      alsoNeeds: 'decrypt_key',
      effect: async (s, response) => expect(response.body.id).toBe(s.key1.keyId),
    },
  ],
  hostile: {
    base: () => [['keyId', fixture.keyId]],
    breakers: () => ({ keyId: badQueryString(64), decrypt: badQueryBoolean() }),
  },
  wire: {
    async reads(w) {
      const { c } = w;
      const k1 = w.got('k1');
      const k2 = w.got('k2');
      const k7 = w.got('k7');
      const k8 = w.got('k8');
      await c.get('getKey k1', 'keys.getKey', `keyId=${k1.keyId}`);
      await c.get('getKey k2', 'keys.getKey', `keyId=${k2.keyId}`);
      await c.get('getKey k7: daily refill', 'keys.getKey', `keyId=${k7.keyId}`);
      await c.get('getKey k8: monthly refill', 'keys.getKey', `keyId=${k8.keyId}`);
      await c.get('getKey: unknown id', 'keys.getKey', 'keyId=key_missing');
      await c.get('getKey: well-formed unknown id', 'keys.getKey', `keyId=${FIXED_IDS[1]}`);
      await c.get('getKey: no keyId', 'keys.getKey', '');
      await c.get('getKey: keyId with a NUL', 'keys.getKey', 'keyId=key%00x');
      await c.get('getKey: another workspace sees 404', 'keys.getKey', `keyId=${k1.keyId}`, {
        auth: 'other_ws',
      });
    },
  },
});
