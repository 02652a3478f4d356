import { namespaceN } from '../../support/authzScene';
import { badAsync, badNamespace } from '../../support/hostile';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'ratelimits.multiLimit',
  authz: [
    {
      input: (s) => [{ namespace: s.nsN, identifier: 'multi', limit: 3, duration: 60_000 }],
      lookup: { ...namespaceN, elsewhere: 'created' },
      effect: async (_, response) =>
        expect(response.body).toMatchObject({
          success: true,
          limits: [{ namespace: expect.any(String), success: true, limit: 3, remaining: 2 }],
        }),
    },
  ],
  hostile: {
    base: () => [
      ['namespace', '"fuzz.ns"'],
      ['identifier', '"user_2"'],
      ['limit', '1000'],
      ['duration', '60000'],
      ['cost', '1'],
      ['async', 'false'],
    ],
    breakers: () => ({ namespace: badNamespace(), async: badAsync() }),
  },
  wire: {},
});
