import { namespaceN } from '../../support/authzScene';
import { badAsync, badNamespace } from '../../support/hostile';
import { HOUR, PER_HOUR } from '../../support/wireScenario';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'ratelimits.limit',
  authz: [
    {
      input: (s) => ({ namespace: s.nsN, identifier: 'u', limit: 3, duration: 60_000 }),
      lookup: { ...namespaceN, elsewhere: 'created' },
      effect: async (_, response) =>
        expect(response.body).toMatchObject({ success: true, limit: 3 }),
    },
  ],
  hostile: {
    base: () => [
      ['namespace', '"fuzz.ns"'],
      ['identifier', '"user_1"'],
      ['limit', '1000'],
      ['duration', '60000'],
      ['cost', '1'],
      ['async', 'false'],
    ],
    breakers: () => ({ namespace: badNamespace(), async: badAsync() }),
  },
  wire: {
    async limits(w) {
      const { c } = w;
      await w.limit('consistent 1 of 2', { identifier: 'user-1', ...PER_HOUR });
      await w.limit('consistent 2 of 2', { identifier: 'user-1', ...PER_HOUR });
      await w.limit('consistent refused', { identifier: 'user-1', ...PER_HOUR });
      await w.limit('fast 1 of 1', { identifier: 'user-2', limit: 1, duration: HOUR, async: true });
      await w.limit('fast refused', {
        identifier: 'user-2',
        limit: 1,
        duration: HOUR,
        async: true,
      });
      await w.limit('named namespace, cost 0', {
        namespace: 'corpus.api',
        identifier: 'u',
        ...PER_HOUR,
        cost: 0,
      });
      await w.limit('cost above the limit', {
        namespace: 'corpus.api',
        identifier: 'u',
        ...PER_HOUR,
        cost: 3,
      });
      await w.limit('unicode identifier', { identifier: '用户🔑', ...PER_HOUR });
      await w.limit('identifier with a NUL', { identifier: 'a\u0000b', ...PER_HOUR });
      await w.limit('identifier __proto__', { identifier: '__proto__', ...PER_HOUR });
      await w.limit('namespace __proto__', {
        namespace: '__proto__',
        identifier: 'x',
        ...PER_HOUR,
      });
      await w.limit('missing identifier', { ...PER_HOUR });
      await w.limit('limit 0', { identifier: 'x', limit: 0, duration: HOUR });
      await w.limit('duration 0', { identifier: 'x', limit: 1, duration: 0 });
      await w.limit('namespace with a space', {
        namespace: 'bad ns',
        identifier: 'x',
        ...PER_HOUR,
      });
      await w.limit('cost -1', { identifier: 'x', ...PER_HOUR, cost: -1 });
      await w.limit('async "yes"', { identifier: 'x', ...PER_HOUR, async: 'yes' });
      await w.limit('257-character identifier', { identifier: 'i'.repeat(257), ...PER_HOUR });
      await c.postRaw(
        'limit: limit 1e400',
        'ratelimits.limit',
        '{"identifier":"x","limit":1e400,"duration":1000}',
      );
      await c.postRaw(
        'limit: limit 9007199254740993',
        'ratelimits.limit',
        '{"identifier":"x","limit":9007199254740993,"duration":1000}',
      );
      await w.limit('403: narrow root key', { identifier: 'x', ...PER_HOUR }, { auth: 'narrow' });
    },
  },
});
