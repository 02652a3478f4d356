import fc from 'fast-check';
import { namespaceN } from '../../support/authzScene';
import { badAsync, badNamespace, badString } from '../../support/hostile';
import { FIXED_IDS, HOUR, type SendOptions } from '../../support/wireScenario';
import { defineCases } from '../types';

/** The namespace whose overrides the wire corpus sets, reads and deletes. */
const ns = { namespaceName: 'corpus.ns' };

export const cases = defineCases({
  operation: 'ratelimits.setOverride',
  authz: [
    {
      input: (s) => ({ namespaceName: s.nsN, identifier: 'user_9', limit: 9, duration: 1000 }),
      lookup: { ...namespaceN, elsewhere: 'created' },
      effect: async (_, response) => {
        expect(response.body.overrideId).toMatch(/^rlor_/);
      },
    },
  ],
  hostile: {
    base: () => [
      ['namespaceName', '"fuzz.ns"'],
      ['identifier', '"user_*"'],
      ['limit', '5'],
      ['duration', '1000'],
      ['async', 'true'],
    ],
    // Neither namespaceName nor namespaceId: 400 too.
    alsoRequired: ['namespaceName'],
    breakers: () => ({
      namespaceName: badNamespace(),
      // Both namespaceName and namespaceId: 400 whatever the id.
      namespaceId: fc.oneof(badString(64), fc.constant('"rlns_1ChFn6PMC5yVErDBdZFGpo"')),
      async: badAsync(),
    }),
  },
  wire: {
    async overrides(w) {
      const { c } = w;
      const set = (label: string, body: Record<string, unknown>, options: SendOptions = {}) =>
        c.post(`setOverride: ${label}`, 'ratelimits.setOverride', body, options);
      await set('exact vip', {
        ...ns,
        identifier: 'vip',
        limit: 5,
        duration: HOUR,
      });
      await set('wildcard vip*', {
        ...ns,
        identifier: 'vip*',
        limit: 3,
        duration: HOUR,
        async: true,
      });
      await set('exact vip again', {
        ...ns,
        identifier: 'vip',
        limit: 4,
        duration: HOUR,
      });
      await set('identifier __proto__', {
        ...ns,
        identifier: '__proto__',
        limit: 1,
        duration: HOUR,
      });
      await set('both namespace refs', {
        ...ns,
        namespaceId: 'rlns_missing',
        identifier: 'x',
        limit: 1,
        duration: HOUR,
      });
      await set('no namespace', { identifier: 'x', limit: 1, duration: HOUR });
      await set('unknown namespaceId', {
        namespaceId: FIXED_IDS[2],
        identifier: 'x',
        limit: 1,
        duration: HOUR,
      });
      await set('limit 0', { ...ns, identifier: 'x', limit: 0, duration: HOUR });
      await set(
        '403: narrow root key',
        {
          ...ns,
          identifier: 'x',
          limit: 1,
          duration: HOUR,
        },
        { auth: 'narrow' },
      );
      await w.limit('exact override applies', {
        namespace: 'corpus.ns',
        identifier: 'vip',
        limit: 1,
        duration: 1000,
      });
      await w.limit('wildcard override applies', {
        namespace: 'corpus.ns',
        identifier: 'vip-42',
        limit: 1,
        duration: 1000,
      });
      await w.limit('no override matches', {
        namespace: 'corpus.ns',
        identifier: 'other',
        limit: 1,
        duration: HOUR,
      });
    },
  },
});
