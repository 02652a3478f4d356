import { crc32 as zlibCrc32 } from 'node:zlib';
import fc from 'fast-check';
import { crc32 } from '../../src/keys/crc32';

describe('crc32', () => {
  // The CRC-32/ISO-HDLC catalogue's check value, and two more known vectors.
  test.each([
    ['', 0x00000000],
    ['123456789', 0xcbf43926],
    ['The quick brown fox jumps over the lazy dog', 0x414fa339],
    ['a', 0xe8b7be43],
  ])('crc32(%j) is its known value', (text, expected) => {
    expect(crc32(text)).toBe(expected);
  });

  test("agrees with Node's zlib.crc32 on any ASCII string", () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii', maxLength: 400 }), (text) => {
        expect(crc32(text)).toBe(zlibCrc32(text));
      }),
      { numRuns: 2000 },
    );
  });

  test('a range, continued from the CRC of what precedes it, is the CRC of the whole', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary-ascii', maxLength: 200 }),
        fc.nat(),
        fc.nat(),
        (text, a, b) => {
          const [from, to] = [a % (text.length + 1), b % (text.length + 1)].sort((x, y) => x - y);
          expect(crc32(text, from!, to!, crc32(text, 0, from!))).toBe(crc32(text.slice(0, to!)));
          expect(crc32(text, 0, to!)).toBe(zlibCrc32(text.slice(0, to!)));
        },
      ),
    );
  });

  test('is an unsigned 32-bit integer', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii' }), (text) => {
        const value = crc32(text);
        expect(Number.isInteger(value) && value >= 0 && value < 2 ** 32).toBe(true);
      }),
    );
  });
});
