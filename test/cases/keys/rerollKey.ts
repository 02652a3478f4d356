import { keyOfA } from '../../support/authzScene';
import { DAY, json } from '../../support/hostile';
import { fixture } from '../../support/hostileTarget';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'keys.rerollKey',
  // A grace period of an hour: key 1 keeps verifying for the rows after this one.
  authz: [
    {
      input: (s) => ({ keyId: s.key1.keyId, expiration: 3_600_000 }),
      lookup: keyOfA,
      effect: async (s, response, admin) => {
        expect(response.body).toEqual({
          keyId: expect.stringMatching(/^key_/),
          key: expect.any(String),
        });
        const rerolled = await admin.get('keys.getKey', { keyId: String(response.body.keyId) });
        expect(rerolled.body.apiId).toBe(s.apiA);
        const verdict = await admin.post('keys.verifyKey', { key: String(response.body.key) });
        expect(verdict.body.code).toBe('VALID');
        const old = await admin.get('keys.getKey', { keyId: s.key1.keyId });
        expect(old.body.expires).toEqual(expect.any(Number));
      },
    },
  ],
  // A day's grace: the fixture key keeps verifying. Both fields are broken as their schemas say.
  hostile: {
    base: () => [
      ['keyId', json(fixture.keyId)],
      ['expiration', String(DAY)],
    ],
  },
  wire: {},
});
