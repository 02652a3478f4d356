import { keyOfA } from '../../support/authzScene';
import { fixture } from '../../support/hostileTarget';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'keys.getRecentVerifications',
  authz: [
    {
      input: (s) => ({ keyId: s.key1.keyId }),
      lookup: keyOfA,
      effect: async (_, response) => expect(response.body.scope).toBe('node'),
    },
  ],
  hostile: { base: () => [['keyId', fixture.keyId]] },
  wire: {
    async recent(w) {
      const { c } = w;
      const k2 = w.got('k2');
      const k8 = w.got('k8');
      await c.get('getRecentVerifications k2', 'keys.getRecentVerifications', `keyId=${k2.keyId}`);
      await c.get(
        'getRecentVerifications k8: none',
        'keys.getRecentVerifications',
        `keyId=${k8.keyId}`,
      );
      await c.get(
        'getRecentVerifications: unknown id',
        'keys.getRecentVerifications',
        'keyId=key_missing',
      );
    },
  },
});
