import fc from 'fast-check';
import { badCursor, badQueryBoolean, badQueryString } from '../../support/hostile';
import { fixture } from '../../support/hostileTarget';
import { enc, field } from '../../support/wireScenario';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'apis.listKeys',
  authz: [
    {
      input: (s) => ({ apiId: s.apiA }),
      effect: async (_, response) => expect(response.body.total).toBe(2),
    },
    {
      variant: 'with decrypt',
      input: (s) => ({ apiId: s.apiA, decrypt: true }),
      alsoNeeds: 'decrypt_key',
      effect: async (_, response) => expect(response.body.total).toBe(2),
    },
  ],
  hostile: {
    base: () => [
      ['apiId', fixture.apiId],
      ['limit', '10'],
      ['ownerId', fixture.ownerId],
    ],
    breakers: () => ({
      cursor: badCursor(),
      externalId: fc.oneof(badQueryString(256), fc.constant('someone-else')),
      decrypt: badQueryBoolean(),
    }),
  },
  wire: {
    async pages(w) {
      const { c } = w;
      const apiA = w.got('apiA');
      await c.get('listKeys A', 'apis.listKeys', `apiId=${apiA}`);
      const first = await c.get('listKeys A: limit 4', 'apis.listKeys', `apiId=${apiA}&limit=4`);
      const second = await c.get(
        'listKeys A: limit 4, page 2',
        'apis.listKeys',
        `apiId=${apiA}&limit=4&cursor=${enc(field(first, 'cursor', 'listKeys page 1'))}`,
      );
      await c.get(
        'listKeys A: limit 4, page 3',
        'apis.listKeys',
        `apiId=${apiA}&limit=4&cursor=${enc(field(second, 'cursor', 'listKeys page 2'))}`,
      );
      await c.get('listKeys A: ownerId', 'apis.listKeys', `apiId=${apiA}&ownerId=owner-1`);
      await c.get('listKeys A: externalId', 'apis.listKeys', `apiId=${apiA}&externalId=owner-1`);
      await c.get('listKeys A: limit 0001', 'apis.listKeys', `apiId=${apiA}&limit=0001`);
      await c.get('listKeys: cursor abc', 'apis.listKeys', `apiId=${apiA}&cursor=abc`);
      await c.get('listKeys: limit 101', 'apis.listKeys', `apiId=${apiA}&limit=101`);
      await c.get('listKeys: limit 1.5', 'apis.listKeys', `apiId=${apiA}&limit=1.5`);
      await c.get(
        'listKeys: limit of 17 digits',
        'apis.listKeys',
        `apiId=${apiA}&limit=${'9'.repeat(17)}`,
      );
      await c.get('listKeys: limit twice', 'apis.listKeys', `apiId=${apiA}&limit=1&limit=2`);
      await c.get('listKeys: bracketed name', 'apis.listKeys', `apiId%5B%5D=${apiA}`);
      await c.get('listKeys: unknown apiId', 'apis.listKeys', 'apiId=api_missing');
      await c.get('listKeys: no apiId', 'apis.listKeys', '');
      await c.get('listKeys: scoped root key, its API', 'apis.listKeys', `apiId=${apiA}&limit=1`, {
        auth: 'scoped',
      });
    },
  },
});
