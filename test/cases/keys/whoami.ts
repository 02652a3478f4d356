import { keyOfA } from '../../support/authzScene';
import { json } from '../../support/hostile';
import { fixture } from '../../support/hostileTarget';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'keys.whoami',
  authz: [
    {
      input: (s) => ({ key: s.key1.key }),
      lookup: { ...keyOfA, hidden: true },
      effect: async (s, response) => expect(response.body.id).toBe(s.key1.keyId),
    },
  ],
  hostile: { base: () => [['key', json(fixture.key)]] },
  wire: {},
});
