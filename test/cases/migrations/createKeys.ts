import fc from 'fast-check';
import {
  DAY,
  VALID_RATELIMIT,
  badObject,
  badPrefix,
  badRemaining,
  json,
  keyFieldBreakers,
  wrongType,
} from '../../support/hostile';
import { fixture } from '../../support/hostileTarget';
import { sha256Base64, type SendOptions } from '../../support/wireScenario';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'migrations.createKeys',
  authz: [
    {
      input: (s) => [{ apiId: s.apiA, plaintext: `imported_${s.nsN}` }],
      effect: async (s, response, admin) => {
        expect(response.body).toEqual({ keyIds: [expect.stringMatching(/^key_/)] });
        const verdict = await admin.post('keys.verifyKey', { key: `imported_${s.nsN}` });
        expect(verdict.body.code).toBe('VALID');
      },
    },
  ],
  hostile: {
    base: () => [
      ['apiId', json(fixture.apiId)],
      ['plaintext', json(`migrated_${fixture.keyId}`)],
      ['prefix', '"migrated"'],
      ['name', '"imported"'],
      ['ownerId', json(fixture.ownerId)],
      ['meta', '{"from":"elsewhere"}'],
      ['expires', String(Date.now() + DAY)],
      ['ratelimit', VALID_RATELIMIT],
      ['remaining', '5'],
      ['enabled', 'true'],
    ],
    // One of plaintext and hash is required; hash is broken below.
    alsoRequired: ['plaintext'],
    breakers: () => ({
      ...keyFieldBreakers(),
      recoverable: fc.oneof(wrongType(['boolean']), fc.constantFrom('1', '"true"')),
      // With plaintext, any hash is one too many; alone, these are malformed.
      hash: fc.oneof(
        badObject(),
        fc.constantFrom(
          '{"value":"abc","variant":"sha256_base64"}',
          `{"value":"${'A'.repeat(43)}=","variant":"sha256_hex"}`,
          '{"variant":"sha256_base64"}',
          `{"value":"${'A'.repeat(43)}="}`,
        ),
      ),
      start: fc.oneof(
        wrongType(['string', 'null']),
        fc.integer({ min: 33, max: 100 }).map((n) => json('s'.repeat(n))),
      ),
      prefix: badPrefix().filter((text) => text !== 'null'),
      remaining: badRemaining(),
    }),
  },
  wire: {
    async imports(w) {
      const { c } = w;
      const apiA = w.got('apiA');
      const migrate = (label: string, body: unknown, options: SendOptions = {}) =>
        c.post(`createKeys: ${label}`, 'migrations.createKeys', body, options);
      await migrate('three keys by plaintext and hash', [
        { apiId: apiA, plaintext: 'corpus_migrated_0001', name: 'm1' },
        {
          apiId: apiA,
          hash: { value: sha256Base64('corpus_migrated_0002'), variant: 'sha256_base64' },
          start: 'corpus_migr',
        },
        { apiId: apiA, prefix: 'mig', plaintext: 'mig_abcdefgh12345', remaining: 7 },
      ]);
      await w.verify('migrated by plaintext', { key: 'corpus_migrated_0001' });
      await w.verify('migrated by hash', { key: 'corpus_migrated_0002' });
      await w.verify('migrated with a prefix and credits', { key: 'mig_abcdefgh12345' });
      await migrate('409: hash exists', [{ apiId: apiA, plaintext: 'corpus_migrated_0001' }]);
      await migrate('409: same key twice in the batch', [
        { apiId: apiA, plaintext: 'corpus_migrated_0009' },
        { apiId: apiA, plaintext: 'corpus_migrated_0009' },
      ]);
      await migrate('both plaintext and hash', [
        {
          apiId: apiA,
          plaintext: 'x',
          hash: { value: sha256Base64('x'), variant: 'sha256_base64' },
        },
      ]);
      await migrate('neither plaintext nor hash', [{ apiId: apiA }]);
      await migrate('hash value not base64', [
        { apiId: apiA, hash: { value: 'not-a-hash', variant: 'sha256_base64' } },
      ]);
      await migrate('empty array', []);
      await migrate('an object instead of an array', { apiId: apiA, plaintext: 'z' });
      await migrate(
        '101 keys',
        Array.from({ length: 101 }, (_, i) => ({ apiId: apiA, plaintext: `bulk_${i}` })),
      );
      await migrate('unknown apiId in the second item', [
        { apiId: apiA, plaintext: 'corpus_migrated_0010' },
        { apiId: 'api_missing', plaintext: 'corpus_migrated_0011' },
      ]);
      await migrate('ratelimit error in the first item', [
        { apiId: apiA, plaintext: 'corpus_migrated_0012', ratelimit: { limit: 5 } },
      ]);
      await migrate('403: narrow root key', [{ apiId: apiA, plaintext: 'corpus_migrated_0013' }], {
        auth: 'narrow',
      });
    },
  },
});
