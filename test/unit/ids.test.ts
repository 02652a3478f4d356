import fc from 'fast-check';
import { looksLikeId, newId, newRequestId, type IdPrefix } from '../../src/keys/ids';

const PREFIXES: IdPrefix[] = ['ws', 'api', 'key', 'req', 'rk'];
const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;
/** 6 bytes of milliseconds: the largest timestamp an id can carry. */
const MAX_MS = 2 ** 48 - 1;

describe('newId', () => {
  test.each(PREFIXES)('starts with %s_ and has a 22-character base58 body', (prefix) => {
    const id = newId(prefix);
    expect(id.startsWith(`${prefix}_`)).toBe(true);
    const body = id.slice(prefix.length + 1);
    expect(body).toHaveLength(22);
    expect(body).toMatch(BASE58);
  });

  test('has the same length at every time, even at 0 ms', () => {
    for (const now of [0, 1, 57, 58, 1_000_000, Date.now(), MAX_MS]) {
      expect(newId('key', now)).toHaveLength('key_'.length + 22);
    }
  });

  test('two ids of the same millisecond differ', () => {
    const now = Date.now();
    const ids = new Set(Array.from({ length: 1000 }, () => newId('req', now)));
    expect(ids.size).toBe(1000);
  });

  test('ids created at increasing milliseconds sort lexicographically in the same order', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: MAX_MS - 1 }),
        fc.integer({ min: 1, max: 1_000_000 }),
        (earlier, gap) => {
          const later = Math.min(earlier + gap, MAX_MS);
          const a = newId('key', earlier);
          const b = newId('key', later);
          expect(a < b).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });

  test('ids one millisecond apart sort in time order whatever their random part', () => {
    const now = 1_700_000_000_000;
    for (let i = 0; i < 200; i++) {
      expect(newId('api', now + i) < newId('api', now + i + 1)).toBe(true);
    }
  });

  test('a sorted list of ids made at increasing times is in creation order', () => {
    const start = Date.now();
    const made = Array.from({ length: 100 }, (_, i) => newId('key', start + i * 7));
    expect([...made].sort()).toEqual(made);
  });
});

describe('looksLikeId', () => {
  test.each(PREFIXES)('accepts a fresh %s id', (prefix) => {
    expect(looksLikeId(prefix, newId(prefix))).toBe(true);
  });

  test('refuses an id of another type', () => {
    expect(looksLikeId('key', newId('api'))).toBe(false);
    expect(looksLikeId('api', newId('key'))).toBe(false);
    expect(looksLikeId('ws', newId('rk'))).toBe(false);
  });

  test.each([
    ['empty', ''],
    ['prefix only', 'key_'],
    ['no underscore', 'key123'],
    ['zero (not base58)', 'key_abc0'],
    ['capital O', 'key_abcO'],
    ['capital I', 'key_abcI'],
    ['lower l', 'key_abcl'],
    ['underscore in body', 'key_ab_c'],
    ['dash in body', 'key_ab-c'],
    ['space', 'key_ab c'],
    ['trailing newline', 'key_abc\n'],
    ['upper-case prefix', 'KEY_abc'],
    ['33-character body', `key_${'a'.repeat(33)}`],
    ['unknown prefix', 'foo_abc'],
  ])('refuses %s', (_, text) => {
    expect(looksLikeId('key', text)).toBe(false);
  });

  test('accepts bodies of 1 to 32 base58 characters', () => {
    expect(looksLikeId('key', 'key_1')).toBe(true);
    expect(looksLikeId('key', `key_${'z'.repeat(32)}`)).toBe(true);
  });
});

describe('newRequestId', () => {
  test('is a req_ id of the same shape as newId', () => {
    for (const now of [0, 1, 57, 58, Date.now(), 58 ** 8 - 1]) {
      const id = newRequestId(now);
      expect(id).toHaveLength('req_'.length + 22);
      expect(looksLikeId('req', id)).toBe(true);
      expect(id.slice(4)).toMatch(BASE58);
    }
  });

  test('ids of one millisecond differ; later milliseconds sort later', () => {
    const now = Date.now();
    const ids = new Set(Array.from({ length: 1000 }, () => newRequestId(now)));
    expect(ids.size).toBe(1000);
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 41 }),
        fc.integer({ min: 1, max: 1e6 }),
        (a, gap) => {
          expect(newRequestId(a) < newRequestId(a + gap)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});
