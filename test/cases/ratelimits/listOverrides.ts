import fc from 'fast-check';
import { namespaceN } from '../../support/authzScene';
import { badQueryNamespace } from '../../support/hostile';
import { enc, field } from '../../support/wireScenario';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'ratelimits.listOverrides',
  authz: [
    {
      input: (s) => ({ namespaceName: s.nsN }),
      lookup: namespaceN,
      effect: async (_, response) => expect(response.body.total).toBe(2),
    },
  ],
  hostile: {
    base: () => [
      ['namespaceName', 'fuzz.ns'],
      ['limit', '10'],
    ],
    alsoRequired: ['namespaceName'],
    breakers: () => ({
      namespaceName: badQueryNamespace(),
      namespaceId: fc.string({ maxLength: 70 }),
    }),
  },
  wire: {
    async pages(w) {
      const { c } = w;
      const list = (label: string, query: string) =>
        c.get(`listOverrides: ${label}`, 'ratelimits.listOverrides', query);
      await list('all', 'namespaceName=corpus.ns');
      const overridesPage = await list('limit 1', 'namespaceName=corpus.ns&limit=1');
      await list(
        'limit 1, next page',
        `namespaceName=corpus.ns&limit=1&cursor=${enc(field(overridesPage, 'cursor', 'listOverrides'))}`,
      );
      await list('no namespace', '');
    },
  },
});
