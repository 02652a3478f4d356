import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 as zlibCrc32 } from 'node:zlib';
import fc from 'fast-check';
import { encodeBase58 } from '../../src/keys/base58';
import {
  CHECKSUM_LENGTH,
  KEY_MARKER,
  KEY_PATTERN,
  checksumOf,
  checksumVerdict,
} from '../../src/keys/keyFormat';
import {
  MAX_BYTE_LENGTH,
  MIN_BYTE_LENGTH,
  PREFIX_PATTERN,
  generateKey,
  generateSecret,
} from '../../src/keys/keyMaterial';

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
/** Every character a key is written in: the prefix's 64, which include base58's 58. */
const KEY_CHARACTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';

/** The checksum as docs/security.md defines it, with Node's own CRC-32 and BigInt arithmetic. */
function referenceChecksum(head: string): string {
  let value = BigInt(zlibCrc32(Buffer.from(head, 'ascii')));
  let out = '';
  for (let i = 0; i < 6; i++) {
    out = BASE58[Number(value % 58n)] + out;
    value /= 58n;
  }
  return out;
}

/** A key of the format built from its parts, independently of src/keys/keyFormat.ts. */
function keyOf(prefix: string | undefined, bytes: Uint8Array): string {
  const head = `${prefix ? `${prefix}_` : ''}${encodeBase58(bytes)}0kw10`;
  return head + referenceChecksum(head);
}

const prefixes = fc.option(fc.stringMatching(new RegExp(PREFIX_PATTERN)), { nil: undefined });
const randomParts = fc.uint8Array({ minLength: MIN_BYTE_LENGTH, maxLength: MAX_BYTE_LENGTH });
const keys = fc.tuple(prefixes, randomParts).map(([prefix, bytes]) => keyOf(prefix, bytes));

type Edit =
  { kind: 'replace' | 'add'; at: number; char: string } | { kind: 'drop' | 'swap'; at: number };

/** One edit of `key` at `at` (taken modulo the places there are for it). */
function edited(key: string, edit: Edit): string {
  const n = key.length;
  switch (edit.kind) {
    case 'replace': {
      const i = edit.at % n;
      return key.slice(0, i) + edit.char + key.slice(i + 1);
    }
    case 'add': {
      const i = edit.at % (n + 1);
      return key.slice(0, i) + edit.char + key.slice(i);
    }
    case 'drop': {
      const i = edit.at % n;
      return key.slice(0, i) + key.slice(i + 1);
    }
    case 'swap': {
      const i = edit.at % (n - 1);
      return key.slice(0, i) + key[i + 1] + key[i] + key.slice(i + 2);
    }
  }
}

/** Every edit of `key`: each character replaced or added by each of the 64, dropped, swapped. */
function everyEdit(key: string): string[] {
  const out: string[] = [];
  for (let at = 0; at <= key.length; at++) {
    for (const char of KEY_CHARACTERS) {
      if (at < key.length) out.push(edited(key, { kind: 'replace', at, char }));
      out.push(edited(key, { kind: 'add', at, char }));
    }
    if (at < key.length) out.push(edited(key, { kind: 'drop', at }));
    if (at < key.length - 1) out.push(edited(key, { kind: 'swap', at }));
  }
  return out.filter((variant) => variant !== key);
}

const edits: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({
    kind: fc.constantFrom('replace' as const, 'add' as const),
    at: fc.nat(),
    char: fc.constantFrom(...KEY_CHARACTERS),
  }),
  fc.record({ kind: fc.constantFrom('drop' as const, 'swap' as const), at: fc.nat() }),
);

describe('the format', () => {
  test('is [prefix_]random, the marker 0kw10, and 6 base58 characters of CRC-32', () => {
    expect(KEY_MARKER).toBe('0kw10');
    expect(CHECKSUM_LENGTH).toBe(6);
    // A fixed vector: CRC-32 of the head is 0x763f5c41 here.
    const head = 'sk_test_3mJr7AoUXx2Wqd1TzDg2vZ0kw10';
    expect(zlibCrc32(head)).toBe(0x763f5c41);
    expect(checksumOf(head)).toBe(referenceChecksum(head));
    expect(checksumVerdict(head + checksumOf(head))).toBe('valid');
  });

  test('checksumOf is the reference checksum of any head', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii', maxLength: 400 }), (head) => {
        expect(checksumOf(head)).toBe(referenceChecksum(head));
      }),
    );
  });

  test('generateKey makes keys of the format, with the prefix as given', () => {
    for (const prefix of [undefined, 'sk_live', 'a', 'x'.repeat(16), 'a0kw10', '0kw10_0kw10']) {
      for (const byteLength of [MIN_BYTE_LENGTH, 32, MAX_BYTE_LENGTH]) {
        const { plaintext } = generateKey(prefix, byteLength);
        const head = plaintext.slice(0, -CHECKSUM_LENGTH);
        expect(head.endsWith(KEY_MARKER)).toBe(true);
        expect(plaintext.slice(-CHECKSUM_LENGTH)).toBe(referenceChecksum(head));
        if (prefix) expect(plaintext.startsWith(`${prefix}_`)).toBe(true);
        const random = head.slice(prefix ? prefix.length + 1 : 0, -KEY_MARKER.length);
        expect(random).toMatch(/^[1-9A-HJ-NP-Za-km-z]{16,349}$/);
      }
    }
  });

  test('KEY_PATTERN matches every generated key whole, and no key of the old shape', () => {
    const whole = new RegExp(`^${KEY_PATTERN}$`);
    const anywhere = new RegExp(KEY_PATTERN);
    fc.assert(
      fc.property(prefixes, randomParts, (prefix, bytes) => {
        expect(keyOf(prefix, bytes)).toMatch(whole);
        const old = `${prefix ? `${prefix}_` : ''}${encodeBase58(bytes)}`;
        expect(old).not.toMatch(anywhere);
      }),
    );
  });

  test('docs/security.md gives KEY_PATTERN as it is', () => {
    const security = readFileSync(join(__dirname, '../../docs/security.md'), 'utf8');
    expect(security).toContain(KEY_PATTERN);
  });
});

describe('checksumVerdict', () => {
  test('generated keys always pass', () => {
    fc.assert(
      fc.property(keys, (key) => {
        expect(checksumVerdict(key)).toBe('valid');
      }),
      { numRuns: 1000 },
    );
    for (let i = 0; i < 1000; i++) {
      expect(checksumVerdict(generateKey(i % 2 ? 'sk_live' : undefined).plaintext)).toBe('valid');
    }
  });

  test('any single-character change is refused: replaced, dropped, added, swapped', () => {
    fc.assert(
      fc.property(keys, edits, (key, edit) => {
        const variant = edited(key, edit);
        fc.pre(variant !== key);
        expect(checksumVerdict(variant)).toBe('wrong');
      }),
      { numRuns: 20_000 },
    );
  });

  test('every single-character change of these keys is refused, at every place', () => {
    let variants = 0;
    for (const prefix of [undefined, 'sk', 'sk_live', 'x'.repeat(16), 'a0kw10', 'kw_0']) {
      for (const byteLength of [16, 24, 64]) {
        const { plaintext } = generateKey(prefix, byteLength);
        for (const variant of everyEdit(plaintext)) {
          variants++;
          if (checksumVerdict(variant) !== 'wrong') throw new Error(`not refused: ${variant}`);
        }
      }
    }
    expect(variants).toBeGreaterThan(100_000);
  });

  test('a key ending in the marker is refused when its checksum is wrong or not base58', () => {
    const head = `bench_${encodeBase58(randomBytes(16))}${KEY_MARKER}`;
    const right = checksumOf(head);
    const wrong = right === '111111' ? '111112' : '111111';
    expect(checksumVerdict(head + right)).toBe('valid');
    expect(checksumVerdict(head + wrong)).toBe('wrong');
    expect(checksumVerdict(`${head}${right.slice(0, 5)}0`)).toBe('wrong');
    expect(checksumVerdict(`${head}zzzzzz`)).toBe(
      referenceChecksum(head) === 'zzzzzz' ? 'valid' : 'wrong',
    );
    expect(checksumVerdict(`${KEY_MARKER}111111`)).toBe(
      checksumOf(KEY_MARKER) === '111111' ? 'valid' : 'wrong',
    );
  });

  test('keys of the old shape are not checksummed keys, whatever their prefix', () => {
    fc.assert(
      fc.property(prefixes, randomParts, (prefix, bytes) => {
        expect(checksumVerdict(`${prefix ? `${prefix}_` : ''}${encodeBase58(bytes)}`)).toBe('none');
      }),
      { numRuns: 2000 },
    );
    for (const prefix of [undefined, 'kw', '0kw10', 'x_0kw10', 'kw01']) {
      for (let i = 0; i < 200; i++) {
        expect(checksumVerdict(generateSecret(prefix, 16).plaintext)).toBe('none');
      }
    }
  });

  test('keys of other shapes are not checksummed keys: hex, UUID, base64url, short strings', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 64 }), (bytes) => {
        const buffer = Buffer.from(bytes);
        expect(checksumVerdict(buffer.toString('hex'))).toBe('none');
        expect(checksumVerdict(`sk_${buffer.toString('base64url')}`)).toBe('none');
      }),
      { numRuns: 2000 },
    );
    for (let i = 0; i < 200; i++) expect(checksumVerdict(randomUUID())).toBe('none');
    for (const key of ['', 'x', KEY_MARKER, 'no_such_key', `${KEY_MARKER}1111`, '0kw1'.repeat(4)]) {
      expect(checksumVerdict(key)).toBe('none');
    }
  });
});
