import { createHash } from 'node:crypto';
import {
  DEFAULT_BYTE_LENGTH,
  MAX_BYTE_LENGTH,
  MIN_BYTE_LENGTH,
  PREFIX_PATTERN,
  generateKey,
  generateSecret,
  hashKey,
  prefixOf,
  startOf,
} from '../../src/keys/keyMaterial';
import { CHECKSUM_LENGTH, KEY_MARKER } from '../../src/keys/keyFormat';

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;
/** The marker and the checksum that end every generated key (test/unit/keyFormat.test.ts). */
const TAIL = new RegExp(`${KEY_MARKER}[1-9A-HJ-NP-Za-km-z]{${CHECKSUM_LENGTH}}$`);
const TAIL_LENGTH = KEY_MARKER.length + CHECKSUM_LENGTH;

/** The random part of a generated key: between the prefix's `_` and the marker. */
function randomPart(plaintext: string, prefix?: string): string {
  expect(plaintext).toMatch(TAIL);
  return plaintext.slice(prefix ? prefix.length + 1 : 0, -TAIL_LENGTH);
}

/** Length bounds of base58(n random bytes): n leading zeros at least, ⌈n·log58(256)⌉ at most. */
function base58LengthBounds(byteLength: number): [number, number] {
  return [byteLength, Math.ceil((byteLength * 8) / Math.log2(58))];
}

describe('generateKey', () => {
  test('is prefix_, a base58 random part, the marker and the checksum when a prefix is given', () => {
    const { plaintext } = generateKey('sk_live');
    expect(plaintext.startsWith('sk_live_')).toBe(true);
    expect(randomPart(plaintext, 'sk_live')).toMatch(BASE58);
  });

  test.each([undefined, ''])('has no underscore at all without a prefix (%j)', (prefix) => {
    const { plaintext, start } = generateKey(prefix);
    expect(plaintext).not.toContain('_');
    expect(randomPart(plaintext)).toMatch(BASE58);
    expect(start).toBe(plaintext.slice(0, 4));
  });

  test('uses 16 bytes by default, and allows 16 to 255', () => {
    expect(DEFAULT_BYTE_LENGTH).toBe(16);
    expect(MIN_BYTE_LENGTH).toBe(16);
    expect(MAX_BYTE_LENGTH).toBe(255);
    const [min, max] = base58LengthBounds(16);
    for (let i = 0; i < 50; i++) {
      const { plaintext } = generateKey(undefined);
      expect(plaintext.length).toBeGreaterThanOrEqual(min + TAIL_LENGTH);
      expect(plaintext.length).toBeLessThanOrEqual(max + TAIL_LENGTH);
    }
  });

  test.each([
    [MIN_BYTE_LENGTH, 22],
    [32, 44],
    [MAX_BYTE_LENGTH, 349],
  ])('byteLength %i gives a base58 random part of at most %i characters', (byteLength, longest) => {
    const [min, max] = base58LengthBounds(byteLength);
    expect(max).toBe(longest);
    const lengths = Array.from({ length: 20 }, () => {
      const { plaintext } = generateKey('p', byteLength);
      const body = randomPart(plaintext, 'p');
      expect(body).toMatch(BASE58);
      return body.length;
    });
    for (const length of lengths) {
      expect(length).toBeGreaterThanOrEqual(min);
      expect(length).toBeLessThanOrEqual(max);
    }
    // Random bytes almost never start with a zero byte: most bodies are within 2 of the maximum.
    expect(lengths.filter((length) => length >= max - 2).length).toBeGreaterThanOrEqual(15);
  });

  test('a longer byteLength gives a longer key', () => {
    expect(generateKey(undefined, 255).plaintext.length).toBeGreaterThan(
      generateKey(undefined, 16).plaintext.length * 10,
    );
  });

  test('hash is base64(sha256(plaintext))', () => {
    const { plaintext, hash } = generateKey('api');
    expect(hash).toBe(createHash('sha256').update(plaintext).digest('base64'));
    expect(hash).toMatch(/^[A-Za-z0-9+/]{43}=$/);
  });

  test('start is the prefix, its underscore and the next 4 characters', () => {
    for (const prefix of ['a', 'sk_live', 'A-z_0-9', 'x'.repeat(16)]) {
      const { plaintext, start } = generateKey(prefix);
      expect(start).toHaveLength(prefix.length + 5);
      expect(start).toBe(plaintext.slice(0, prefix.length + 5));
      expect(start.startsWith(`${prefix}_`)).toBe(true);
      expect(start.slice(prefix.length + 1)).toMatch(BASE58);
    }
  });

  test('start never reveals more than 4 characters of the secret', () => {
    const { plaintext, start } = generateKey('pre', 255);
    expect(plaintext.length - start.length).toBeGreaterThan(250);
  });

  test('10,000 keys are all different, and so are their hashes', () => {
    const plaintexts = new Set<string>();
    const hashes = new Set<string>();
    for (let i = 0; i < 10_000; i++) {
      const key = generateKey('k');
      plaintexts.add(key.plaintext);
      hashes.add(key.hash);
    }
    expect(plaintexts.size).toBe(10_000);
    expect(hashes.size).toBe(10_000);
  });
});

describe('generateSecret', () => {
  test('is the shape keys had before the checksum: prefix_ and base58, nothing after', () => {
    const { plaintext, hash, start } = generateSecret('kwroot', 24);
    expect(plaintext).toMatch(/^kwroot_[1-9A-HJ-NP-Za-km-z]{24,33}$/);
    expect(hash).toBe(hashKey(plaintext));
    expect(start).toBe(plaintext.slice(0, 'kwroot_'.length + 4));
    expect(generateSecret(undefined, 16).plaintext).toMatch(BASE58);
  });
});

describe('hashKey', () => {
  test.each([
    ['', '47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='],
    ['abc', 'ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0='],
  ])('hashes %j to its known sha256 in base64', (input, expected) => {
    expect(hashKey(input)).toBe(expected);
  });

  test('hashes UTF-8, not UTF-16', () => {
    expect(hashKey('é')).toBe(
      createHash('sha256')
        .update(Buffer.from([0xc3, 0xa9]))
        .digest('base64'),
    );
  });
});

describe('startOf', () => {
  test('cuts the body to 4 characters', () => {
    expect(startOf('pre', 'abcdefgh')).toBe('pre_abcd');
    expect(startOf(undefined, 'abcdefgh')).toBe('abcd');
    expect(startOf('', 'abcdefgh')).toBe('abcd');
  });
});

describe('PREFIX_PATTERN', () => {
  const pattern = new RegExp(PREFIX_PATTERN);
  test.each(['a', 'sk_live', 'A-Z_a-z_0-9', 'x'.repeat(16)])('accepts %j', (prefix) => {
    expect(pattern.test(prefix)).toBe(true);
  });
  test.each(['', 'x'.repeat(17), 'a.b', 'a b', 'ä', 'a/b'])('refuses %j', (prefix) => {
    expect(pattern.test(prefix)).toBe(false);
  });
});

describe('prefixOf', () => {
  test('gives back the prefix of every generated key, and none for a key without one', () => {
    for (const prefix of [undefined, 'sk', 'sk_live', 'a-b_c', 'x'.repeat(16), '_', '__x']) {
      for (let i = 0; i < 20; i++) expect(prefixOf(generateKey(prefix).start)).toBe(prefix);
    }
  });

  test.each<[string, string | undefined]>([
    ['sk_live_M8Vu', 'sk_live'],
    ['M8Vu', undefined],
    ['', undefined],
    // Imported starts, as their importer gave them.
    ['legacy_0a1b', 'legacy'],
    ['_abcd', undefined],
    ['has space_abcd', undefined],
    [`${'x'.repeat(17)}_abcd`, undefined],
  ])('%j → %j', (start, prefix) => {
    expect(prefixOf(start)).toBe(prefix);
  });
});
