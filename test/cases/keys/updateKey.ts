import fc from 'fast-check';
import { keyOfA } from '../../support/authzScene';
import {
  DAY,
  VALID_RATELIMIT,
  badLinks,
  badNames,
  badRemaining,
  json,
  keyFieldBreakers,
} from '../../support/hostile';
import { fixture } from '../../support/hostileTarget';
import { HOUR } from '../../support/wireScenario';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'keys.updateKey',
  authz: [
    {
      input: (s) => ({ keyId: s.key1.keyId, name: 'updated' }),
      lookup: keyOfA,
      effect: async (s, _, admin) => {
        expect((await admin.get('keys.getKey', { keyId: s.key1.keyId })).body.name).toBe('updated');
      },
    },
  ],
  hostile: {
    base: () => [
      ['keyId', json(fixture.keyId)],
      ['name', '"renamed"'],
      ['ownerId', json(fixture.ownerId)],
      ['meta', '{"plan":"pro"}'],
      ['expires', String(Date.now() + DAY)],
      ['ratelimit', VALID_RATELIMIT],
      ['enabled', 'true'],
    ],
    breakers: () => ({
      ...keyFieldBreakers(),
      // v1's refs (`{ id } | { name, create? }`) or names alone (v2's form).
      permissions: fc.oneof(badNames(), badLinks(0), fc.constant('[{"create":true}]')),
      roles: fc.oneof(badNames(), badLinks(0), fc.constant('[{}]')),
      remaining: badRemaining().filter((text) => text !== '0'),
    }),
  },
  wire: {
    async updates(w) {
      const { c } = w;
      const k1 = w.got('k1');
      const k2 = w.got('k2');
      const update = (label: string, body: Record<string, unknown>) =>
        c.post(`updateKey: ${label}`, 'keys.updateKey', body);
      await update('k1 name and meta', { keyId: k1.keyId, name: 'renamed', meta: { v: 2 } });
      await c.get('getKey k1 after update', 'keys.getKey', `keyId=${k1.keyId}`);
      await update('k1 disabled', { keyId: k1.keyId, enabled: false });
      await w.verify('DISABLED after update', { key: k1.key });
      await update('k1 enabled', { keyId: k1.keyId, enabled: true });
      await update('k1 consistent limit of 1', {
        keyId: k1.keyId,
        ratelimit: { type: 'consistent', limit: 1, refillRate: 1, refillInterval: HOUR },
      });
      await w.verify('k1 1 of 1', { key: k1.key });
      await w.verify('k1 RATE_LIMITED', { key: k1.key });
      await update('k1 ratelimit null, meta null, name null', {
        keyId: k1.keyId,
        ratelimit: null,
        meta: null,
        name: null,
      });
      await w.verify('k1 VALID again', { key: k1.key });
      await update('k1 expires in an hour', { keyId: k1.keyId, expires: Date.now() + HOUR });
      await update('expires in the past', { keyId: k1.keyId, expires: 1000 });
      await update('k1 expires null', { keyId: k1.keyId, expires: null });
      await update('unknown keyId', { keyId: 'key_missing', name: 'x' });
      await update('enabled null', { keyId: k1.keyId, enabled: null });
      await update('refill without credits', {
        keyId: k1.keyId,
        refill: { interval: 'daily', amount: 5 },
      });
      await update('k2 remaining null', { keyId: k2.keyId, remaining: null });
      await c.get('getKey k1 after updates', 'keys.getKey', `keyId=${k1.keyId}`);
    },
  },
});
