import fc from 'fast-check';
import {
  DAY,
  VALID_RATELIMIT,
  badInteger,
  badNames,
  badPrefix,
  badRemaining,
  json,
  keyFieldBreakers,
  wrongType,
} from '../../support/hostile';
import { fixture } from '../../support/hostileTarget';
import { FIXED_IDS, HOUR, createdKey } from '../../support/wireScenario';
import { defineCases } from '../types';

/** What the key holds, by name (not by ref, as updateKey also takes). */
const holdingBreakers = (loose = false) => ({
  permissions: badNames(loose),
  roles: badNames(loose),
});

export const cases = defineCases({
  operation: 'keys.createKey',
  authz: [
    {
      input: (s) => ({ apiId: s.apiA }),
      effect: async (s, response, admin) => {
        const got = await admin.get('keys.getKey', { keyId: String(response.body.keyId) });
        expect(got.body.apiId).toBe(s.apiA);
      },
    },
    {
      variant: 'recoverable',
      input: (s) => ({ apiId: s.apiA, recoverable: true }),
      alsoNeeds: 'encrypt_key',
      effect: async (_, response, admin) => {
        const got = await admin.get('keys.getKey', {
          keyId: String(response.body.keyId),
          decrypt: 'true',
        });
        expect(got.body.plaintext).toBe(response.body.key);
      },
    },
  ],
  hostile: {
    base: () => [
      ['apiId', json(fixture.apiId)],
      ['name', '"k"'],
      ['prefix', '"sk_test"'],
      ['byteLength', '16'],
      ['ownerId', json(fixture.ownerId)],
      ['meta', '{"plan":"pro"}'],
      ['expires', String(Date.now() + DAY)],
      ['ratelimit', VALID_RATELIMIT],
      ['enabled', 'true'],
      ['remaining', '100'],
      ['refill', '{"interval":"monthly","amount":100,"refillDay":31}'],
    ],
    // Optional fields of createKey are not fuzzed with null: the contract leaves null open there.
    breakers: () => ({
      ...keyFieldBreakers(),
      ...holdingBreakers(true),
      recoverable: fc.oneof(wrongType(['boolean']), fc.constantFrom('1', '"true"')),
      prefix: badPrefix().filter((text) => text !== 'null'),
      byteLength: badInteger(16, 255, { nullable: true }),
      remaining: badRemaining(),
    }),
  },
  wire: {
    async keys(w) {
      const { c } = w;
      const apiA = w.got('apiA');
      const apiB = w.got('apiB');
      const k1 = await createdKey(
        c.post('createKey k1: minimal', 'keys.createKey', { apiId: apiA }),
        'k1',
      );
      const k2 = await createdKey(
        c.post('createKey k2: consistent limit, credits, prefix', 'keys.createKey', {
          apiId: apiA,
          name: 'k2',
          prefix: 'sk_live',
          byteLength: 32,
          ownerId: 'owner-1',
          meta: { plan: 'pro', nested: { list: [1, 2, { deep: true }] } },
          ratelimit: { type: 'consistent', limit: 2, refillRate: 1, refillInterval: HOUR },
          remaining: 100,
        }),
        'k2',
      );
      const k3 = await createdKey(
        c.post('createKey k3: fast limit, newer vocabulary', 'keys.createKey', {
          apiId: apiA,
          name: 'k3',
          externalId: 'owner-1',
          ratelimit: { async: true, limit: 2, duration: HOUR },
        }),
        'k3',
      );
      const k4 = await createdKey(
        c.post('createKey k4: two credits', 'keys.createKey', { apiId: apiA, remaining: 2 }),
        'k4',
      );
      const k5 = await createdKey(
        c.post('createKey k5: disabled', 'keys.createKey', { apiId: apiA, enabled: false }),
        'k5',
      );
      // Expires soon; verified near the end of the scenario, once the time has certainly passed.
      const k6Expires = Date.now() + 4_000;
      const k6 = await createdKey(
        c.post('createKey k6: expires soon', 'keys.createKey', {
          apiId: apiA,
          expires: k6Expires,
          prefix: 'exp',
        }),
        'k6',
      );
      const k7 = await createdKey(
        c.post('createKey k7: daily refill', 'keys.createKey', {
          apiId: apiA,
          remaining: 5,
          refill: { interval: 'daily', amount: 5 },
        }),
        'k7',
      );
      const k8 = await createdKey(
        c.post('createKey k8: monthly refill on the 15th', 'keys.createKey', {
          apiId: apiA,
          remaining: 3,
          refill: { interval: 'monthly', amount: 3, refillDay: 15 },
        }),
        'k8',
      );
      const kB = await createdKey(
        c.post('createKey kB: in API B', 'keys.createKey', { apiId: apiB, name: 'in-b' }),
        'kB',
      );
      w.make('k1', k1);
      w.make('k2', k2);
      w.make('k3', k3);
      w.make('k4', k4);
      w.make('k5', k5);
      w.make('k6', k6);
      w.make('k7', k7);
      w.make('k8', k8);
      w.make('kB', kB);
      w.make('k6Expires', k6Expires);
    },
    async refusals(w) {
      const { c } = w;
      const apiA = w.got('apiA');
      const badKey = (label: string, body: Record<string, unknown>) =>
        c.post(`createKey: ${label}`, 'keys.createKey', { apiId: apiA, ...body });
      await c.post('createKey: missing apiId', 'keys.createKey', { name: 'x' });
      await c.post('createKey: unknown apiId', 'keys.createKey', { apiId: 'api_missing' });
      await c.post('createKey: well-formed unknown apiId', 'keys.createKey', {
        apiId: FIXED_IDS[0],
      });
      await badKey('prefix with a space', { prefix: 'sk live' });
      await badKey('prefix with a NUL', { prefix: 'sk\u0000' });
      await badKey('byteLength 15', { byteLength: 15 });
      await badKey('byteLength 256', { byteLength: 256 });
      await badKey('ratelimit.limit 0', {
        ratelimit: { limit: 0, refillRate: 1, refillInterval: 1000 },
      });
      await badKey('ratelimit without refill', { ratelimit: { limit: 5 } });
      await badKey('ratelimit.type slow', {
        ratelimit: { type: 'slow', limit: 5, refillRate: 1, refillInterval: 1000 },
      });
      await badKey('ratelimit.async contradicts type', {
        ratelimit: { type: 'fast', async: false, limit: 5, duration: 1000 },
      });
      await badKey('ratelimit.duration and refillInterval differ', {
        ratelimit: { limit: 5, duration: 1000, refillInterval: 2000 },
      });
      await badKey('ratelimit.refillRate with duration', {
        ratelimit: { limit: 5, refillRate: 3, duration: 1000 },
      });
      await badKey('ratelimit.refillInterval over 30 days', {
        ratelimit: { limit: 5, refillRate: 1, refillInterval: 2_592_000_001 },
      });
      await badKey('remaining 0', { remaining: 0 });
      await badKey('remaining null', { remaining: null });
      await badKey('refill without remaining', { refill: { interval: 'daily', amount: 5 } });
      await badKey('refillDay with daily', {
        remaining: 5,
        refill: { interval: 'daily', amount: 5, refillDay: 3 },
      });
      await badKey('refillDay 32', {
        remaining: 5,
        refill: { interval: 'monthly', amount: 5, refillDay: 32 },
      });
      await badKey('expires in the past', { expires: 1000 });
      await badKey('expires over the maximum', { expires: 8_640_000_000_000_001 });
      await badKey('meta is an array', { meta: ['x'] });
      await badKey('meta nested 9 levels', {
        meta: { a: { a: { a: { a: { a: { a: { a: { a: { a: 1 } } } } } } } } },
      });
      await badKey('meta over 16 KiB', { meta: { blob: 'x'.repeat(16 * 1024) } });
      await badKey('enabled is a string', { enabled: 'yes' });
      await badKey('externalId differs from ownerId', { ownerId: 'a', externalId: 'b' });
    },
  },
});
