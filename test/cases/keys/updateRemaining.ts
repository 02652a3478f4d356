import fc from 'fast-check';
import { keyOfA } from '../../support/authzScene';
import { json, wrongType } from '../../support/hostile';
import { fixture } from '../../support/hostileTarget';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'keys.updateRemaining',
  authz: [
    {
      input: (s) => ({ keyId: s.key1.keyId, op: 'set', value: 7 }),
      lookup: keyOfA,
      effect: async (s, response, admin) => {
        expect(response.body).toEqual({ remaining: 7 });
        expect((await admin.get('keys.getKey', { keyId: s.key1.keyId })).body.remaining).toBe(7);
      },
    },
  ],
  hostile: {
    base: () => [
      ['keyId', json(fixture.keyId)],
      ['op', '"set"'],
      ['value', '10'],
    ],
    breakers: () => ({
      op: fc.oneof(wrongType(['string']), fc.constantFrom('"add"', '"SET"', '""', '"set "')),
    }),
  },
  wire: {
    async credits(w) {
      const { c } = w;
      const k1 = w.got('k1');
      const k4 = w.got('k4');
      const remaining = (label: string, body: Record<string, unknown>) =>
        c.post(`updateRemaining: ${label}`, 'keys.updateRemaining', body);
      await remaining('k4 set 5', { keyId: k4.keyId, op: 'set', value: 5 });
      await remaining('k4 increment 3', { keyId: k4.keyId, op: 'increment', value: 3 });
      await remaining('k4 decrement 2', { keyId: k4.keyId, op: 'decrement', value: 2 });
      await remaining('k4 decrement 100', { keyId: k4.keyId, op: 'decrement', value: 100 });
      await w.verify('k4 VALID after set', { key: k4.key });
      await remaining('op multiply', { keyId: k4.keyId, op: 'multiply', value: 2 });
      await remaining('value -1', { keyId: k4.keyId, op: 'set', value: -1 });
      await remaining('missing value', { keyId: k4.keyId, op: 'set' });
      await remaining('unknown keyId', { keyId: 'key_missing', op: 'set', value: 1 });
      await remaining('k1 increment: unlimited usage', {
        keyId: k1.keyId,
        op: 'increment',
        value: 1,
      });
      await remaining('k1 set 10', { keyId: k1.keyId, op: 'set', value: 10 });
      await w.verify('k1 spends a credit', { key: k1.key });
    },
  },
});
