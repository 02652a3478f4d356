import fc from 'fast-check';
import { namespaceN } from '../../support/authzScene';
import { badQueryNamespace } from '../../support/hostile';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'ratelimits.getUsage',
  authz: [
    {
      input: (s) => ({ namespaceName: s.nsN }),
      lookup: namespaceN,
      effect: async (_, response) => expect(response.body.usage).toHaveLength(25),
    },
    {
      variant: 'by namespaceId',
      input: (s) => ({ namespaceId: s.nsNId, groupBy: 'identifier' }),
      lookup: namespaceN,
      effect: async (_, response) => expect(response.body).toEqual({ usage: [] }),
    },
  ],
  hostile: {
    base: () => [
      ['namespaceName', 'fuzz.ns'],
      ['identifier', 'user_1'],
      ['start', '0'],
      ['end', '3600000'],
      ['granularity', 'minute'],
      ['groupBy', 'identifier'],
      ['limit', '10'],
    ],
    alsoRequired: ['namespaceName'],
    breakers: () => ({
      namespaceName: badQueryNamespace(),
      namespaceId: fc.string({ maxLength: 70 }),
      start: fc.constantFrom('-1', 'yesterday', '1.5', '3600000'),
      end: fc.constantFrom('-1', 'now', '0', '1e3'),
      granularity: fc.constantFrom('month', 'second', ''),
      groupBy: fc.constantFrom('key', 'time,identifier', ''),
      limit: fc.constantFrom('0', '-1', 'ten', '1001'),
    }),
  },
  wire: {},
});
