import fc from 'fast-check';
import { namespaceN } from '../../support/authzScene';
import { badNamespace, badString } from '../../support/hostile';
import { defineCases } from '../types';

/** The namespace whose overrides the wire corpus sets, reads and deletes. */
const ns = { namespaceName: 'corpus.ns' };

export const cases = defineCases({
  operation: 'ratelimits.deleteOverride',
  authz: [
    {
      input: (s) => ({ namespaceName: s.nsN, identifier: 'user_2' }),
      lookup: namespaceN,
      effect: async (s, _, admin) => {
        const gone = await admin.get('ratelimits.getOverride', {
          namespaceName: s.nsN,
          identifier: 'user_2',
        });
        expect(gone.status).toBe(404);
      },
    },
  ],
  hostile: {
    base: () => [
      ['namespaceName', '"fuzz.ns"'],
      ['identifier', '"user_*"'],
    ],
    alsoRequired: ['namespaceName'],
    breakers: () => ({
      namespaceName: badNamespace(),
      namespaceId: fc.oneof(badString(64), fc.constant('"rlns_1ChFn6PMC5yVErDBdZFGpo"')),
    }),
  },
  wire: {
    async deletes(w) {
      const { c } = w;
      const remove = (label: string, body: Record<string, unknown>) =>
        c.post(`deleteOverride: ${label}`, 'ratelimits.deleteOverride', body);
      await remove('vip', { ...ns, identifier: 'vip' });
      await remove('vip again', { ...ns, identifier: 'vip' });
      await remove('no identifier', { ...ns });
      await w.getOverride('vip after delete', 'namespaceName=corpus.ns&identifier=vip');
      await w.limit('wildcard after the exact one is deleted', {
        namespace: 'corpus.ns',
        identifier: 'vip',
        limit: 1,
        duration: 1000,
      });
    },
  },
});
