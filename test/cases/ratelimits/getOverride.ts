import fc from 'fast-check';
import { namespaceN } from '../../support/authzScene';
import { badQueryNamespace } from '../../support/hostile';
import { FIXED_IDS, enc } from '../../support/wireScenario';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'ratelimits.getOverride',
  authz: [
    {
      input: (s) => ({ namespaceName: s.nsN, identifier: 'user_1' }),
      lookup: namespaceN,
      effect: async (_, response) =>
        expect(response.body).toMatchObject({ identifier: 'user_1', limit: 5 }),
    },
    {
      variant: 'by namespaceId',
      input: (s) => ({ namespaceId: s.nsNId, identifier: 'user_1' }),
      lookup: namespaceN,
      effect: async (_, response) => expect(response.body).toMatchObject({ identifier: 'user_1' }),
    },
  ],
  hostile: {
    base: () => [
      ['namespaceName', 'fuzz.ns'],
      ['identifier', 'user_*'],
    ],
    alsoRequired: ['namespaceName'],
    breakers: () => ({
      namespaceName: badQueryNamespace(),
      namespaceId: fc.string({ maxLength: 70 }),
    }),
  },
  wire: {
    async reads(w) {
      await w.getOverride('vip', 'namespaceName=corpus.ns&identifier=vip');
      await w.getOverride('vip*', `namespaceName=corpus.ns&identifier=${enc('vip*')}`);
      await w.getOverride('unknown identifier', 'namespaceName=corpus.ns&identifier=nobody');
      await w.getOverride('unknown namespace', 'namespaceName=never.used&identifier=vip');
      await w.getOverride('unknown namespaceId', `namespaceId=${FIXED_IDS[2]}&identifier=vip`);
      await w.getOverride('no identifier', 'namespaceName=corpus.ns');
      await w.getOverride('403: narrow root key', 'namespaceName=corpus.ns&identifier=vip', {
        auth: 'narrow',
      });
    },
  },
});
