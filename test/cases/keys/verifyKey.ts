import fc from 'fast-check';
import { keyOfA } from '../../support/authzScene';
import { badCost, badObject, badPermissionQuery, json, wrongType } from '../../support/hostile';
import { fixture } from '../../support/hostileTarget';
import { sleep } from '../../support/wireScenario';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'keys.verifyKey',
  authz: [
    {
      input: (s) => ({ key: s.key1.key }),
      lookup: { ...keyOfA, elsewhere: 'verdict NOT_FOUND' },
      effect: async (s, response) => {
        expect(response.body).toMatchObject({ valid: true, code: 'VALID', keyId: s.key1.keyId });
      },
    },
    {
      variant: 'with apiId',
      input: (s) => ({ key: s.key1.key, apiId: s.apiA }),
      lookup: { ...keyOfA, inputIds: (s) => [s.apiA], elsewhere: 'verdict NOT_FOUND' },
      effect: async (s, response) => {
        expect(response.body).toMatchObject({ valid: true, code: 'VALID', keyId: s.key1.keyId });
      },
    },
  ],
  hostile: {
    base: () => [
      ['key', json(fixture.key)],
      ['apiId', json(fixture.apiId)],
      ['ratelimit', '{"cost":1}'],
      ['authorization', '{"permissions":{"or":["documents.read","documents.write"]}}'],
    ],
    breakers: () => ({
      ratelimit: badCost(),
      remaining: badCost(),
      tags: fc.oneof(
        wrongType(['array']),
        fc.constantFrom(
          '[""]',
          '[1]',
          `["${'t'.repeat(513)}"]`,
          JSON.stringify(Array.from({ length: 21 }, (_, i) => `t${i}`)),
        ),
      ),
      authorization: fc.oneof(
        badObject(),
        fc.constant('{}'),
        badPermissionQuery().map((query) => `{"permissions":${query}}`),
      ),
      // A limit the key lacks is refused only when the verification reaches its limits (as in
      // Unkey), and the fixture key fails its permission query first: tests of its own cover it.
      ratelimits: fc.oneof(
        wrongType(['array']),
        fc.constantFrom(
          '[{}]',
          '[{"name":"has space","limit":1,"duration":1000}]',
          '[{"name":"tokens","cost":-1,"limit":1,"duration":1000}]',
          '[{"name":"tokens","limit":0,"duration":1000}]',
          `[${Array.from({ length: 21 }, (_, i) => `{"name":"l${i}","limit":1,"duration":1000}`).join(',')}]`,
        ),
      ),
    }),
  },
  wire: {
    async verdicts(w) {
      const { c } = w;
      const apiA = w.got('apiA');
      const k1 = w.got('k1');
      const k2 = w.got('k2');
      const k3 = w.got('k3');
      const k4 = w.got('k4');
      const k5 = w.got('k5');
      const kB = w.got('kB');
      await w.verify('VALID, no limits', { key: k1.key });
      await w.verify('VALID with its apiId', { key: k1.key, apiId: apiA });
      await w.verify('VALID, unknown fields ignored', {
        key: k1.key,
        tags: ['a'],
        extra: { x: 1 },
      });
      await c.postRaw(
        'verifyKey: query string is ignored',
        '/v1/keys.verifyKey?debug=1',
        JSON.stringify({ key: k1.key }),
      );
      await w.verify('NOT_FOUND', { key: 'does-not-exist' });
      await w.verify('NOT_FOUND, key with a NUL', { key: 'abc\u0000def' });
      await w.verify('NOT_FOUND, unicode key', { key: 'ключ🔑' });
      await w.verify('NOT_FOUND, key of another workspace', { key: k1.key }, { auth: 'other_ws' });
      await w.verify('DISABLED', { key: k5.key });
      await w.verify('FORBIDDEN: apiId of another API', { key: kB.key, apiId: apiA });
      await w.verify(
        'FORBIDDEN: root key scoped to the other API',
        { key: kB.key, apiId: apiA },
        { auth: 'scoped' },
      );
      await w.verify(
        '403: scoped root key, key of another API',
        { key: kB.key },
        { auth: 'scoped' },
      );
      await w.verify('VALID: scoped root key, its own API', { key: k1.key }, { auth: 'scoped' });
      await w.verify('consistent 1 of 2', { key: k2.key });
      await w.verify('consistent, cost 0 reads', { key: k2.key, ratelimit: { cost: 0 } });
      await w.verify('consistent 2 of 2', { key: k2.key });
      await w.verify('consistent RATE_LIMITED', { key: k2.key });
      await w.verify('consistent RATE_LIMITED, cost 5', { key: k2.key, ratelimit: { cost: 5 } });
      await w.verify('fast 1 of 2', { key: k3.key });
      await w.verify('fast, cost 2 refused', { key: k3.key, ratelimit: { cost: 2 } });
      await w.verify('fast 2 of 2', { key: k3.key });
      await w.verify('fast RATE_LIMITED', { key: k3.key });
      await w.verify('credits 1 of 2', { key: k4.key });
      await w.verify('credits, cost 0 reads', { key: k4.key, remaining: { cost: 0 } });
      await w.verify('credits 2 of 2', { key: k4.key });
      await w.verify('USAGE_EXCEEDED', { key: k4.key });
      await w.verify('USAGE_EXCEEDED, cost 3', { key: k4.key, remaining: { cost: 3 } });
      const permissions = (label: string, query: unknown) =>
        w.verify(`permissions ${label}`, { key: k1.key, authorization: { permissions: query } });
      await permissions('named: INSUFFICIENT_PERMISSIONS', 'documents.read');
      await permissions('{and: []}: 400', { and: [] });
      await permissions('{or: []}: 400', { or: [] });
      await permissions('{or: [x, {and: []}]}: 400', { or: ['x', { and: [] }] });
      await permissions('{not: [x]}: 400', { not: ['x'] });
      await permissions('101 items: 400', { and: Array.from({ length: 101 }, () => 'x') });
      await permissions(
        '17 levels: 400',
        JSON.parse(`${'{"and":['.repeat(17)}{"and":[]}${']}'.repeat(17)}`),
      );
      await permissions('inner item a number: 400', { and: [5] });
      await w.verify('permissions query on a disabled key: DISABLED decides first', {
        key: k5.key,
        authorization: { permissions: 'x' },
      });
      await w.verify('missing key', {});
      await w.verify('empty key', { key: '' });
      await w.verify('513-character key', { key: 'k'.repeat(513) });
      await w.verify('key is a number', { key: 5 });
      await w.verify('65-character apiId', { key: k1.key, apiId: 'a'.repeat(65) });
      await w.verify('unknown apiId', { key: k1.key, apiId: 'api_missing' });
      await w.verify('ratelimit.cost -1', { key: k1.key, ratelimit: { cost: -1 } });
      await w.verify('ratelimit.cost 1.5', { key: k1.key, ratelimit: { cost: 1.5 } });
      await w.verify('remaining.cost "1"', { key: k1.key, remaining: { cost: '1' } });
      await w.verify('named ratelimits', { key: k1.key, ratelimits: [{ name: 'x' }] });
      await w.verify('403: narrow root key', { key: k1.key }, { auth: 'narrow' });
    },
    async expired(w) {
      const { c } = w;
      const k6 = w.got('k6');
      const k6Expires = w.got('k6Expires');
      await sleep(Math.max(0, k6Expires + 50 - Date.now()));
      await w.verify('EXPIRED', { key: k6.key });
      await c.get('getKey k6: expired', 'keys.getKey', `keyId=${k6.keyId}`);
    },
  },
});
