import fc from 'fast-check';
import {
  base58Digit,
  decodeBase58Fixed,
  encodeBase58,
  encodeBase58Fixed,
  isBase58,
} from '../../src/keys/base58';

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

const hex = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text, 'hex'));

/** An independent decoder (BigInt arithmetic), to check the encoder by round trip. */
function decodeBase58(text: string): Uint8Array {
  let zeros = 0;
  while (zeros < text.length && text[zeros] === '1') zeros++;
  let value = 0n;
  for (const ch of text.slice(zeros)) {
    const digit = ALPHABET.indexOf(ch);
    if (digit < 0) throw new Error(`not base58: ${ch}`);
    value = value * 58n + BigInt(digit);
  }
  const body: number[] = [];
  while (value > 0n) {
    body.unshift(Number(value % 256n));
    value /= 256n;
  }
  return Uint8Array.from([...new Array<number>(zeros).fill(0), ...body]);
}

describe('encodeBase58', () => {
  // The Bitcoin Core test vectors (src/test/data/base58_encode_decode.json).
  test.each([
    ['', ''],
    ['61', '2g'],
    ['626262', 'a3gV'],
    ['636363', 'aPEr'],
    ['73696d706c792061206c6f6e6720737472696e67', '2cFupjhnEsSn59qHXstmK2ffpLv2'],
    ['00eb15231dfceb60925886b67d065299925915aeb172c06647', '1NS17iag9jJgTHD1VXjvLCEnZuQ3rJDE9L'],
    ['516b6fcd0f', 'ABnLTmg'],
    ['bf4f89001e670274dd', '3SEo3LWLoPntC'],
    ['572e4794', '3EFU7m'],
    ['ecac89cad93923c02321', 'EJDM8drfXA6uyA'],
    ['10c8511e', 'Rt5zm'],
    ['00000000000000000000', '1111111111'],
  ])('encodes 0x%s as %j', (input, expected) => {
    expect(encodeBase58(hex(input))).toBe(expected);
  });

  test('encodes text bytes like other base58 libraries', () => {
    expect(encodeBase58(Buffer.from('Hello World!'))).toBe('2NEpo7TZRRrLZSi2U');
  });

  test('turns every leading zero byte into a leading 1, and only those', () => {
    expect(encodeBase58(hex('00'))).toBe('1');
    expect(encodeBase58(hex('0000'))).toBe('11');
    expect(encodeBase58(hex('0001'))).toBe('12');
    expect(encodeBase58(hex('000001'))).toBe('112');
    expect(encodeBase58(hex('01'))).toBe('2');
    // 58 is "21": a zero digit inside the number is a 1 too, but not a leading zero byte.
    expect(encodeBase58(hex('3a'))).toBe('21');
    expect(encodeBase58(hex('003a'))).toBe('121');
  });

  test('handles digit boundaries: 57, 58, 255, 256', () => {
    expect(encodeBase58(hex('39'))).toBe('z');
    expect(encodeBase58(hex('3a'))).toBe('21');
    expect(encodeBase58(hex('ff'))).toBe('5Q');
    expect(encodeBase58(hex('0100'))).toBe('5R');
  });

  test('round-trips through an independent decoder, leading zeros included', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const text = encodeBase58(bytes);
        expect(isBase58(text)).toBe(true);
        expect(Buffer.from(decodeBase58(text)).equals(Buffer.from(bytes))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  test('round-trips 255-byte inputs (the largest key material)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 255, maxLength: 255 }), (bytes) => {
        expect(Buffer.from(decodeBase58(encodeBase58(bytes))).equals(Buffer.from(bytes))).toBe(
          true,
        );
      }),
      { numRuns: 30 },
    );
  });

  test('keeps the byte order of equal-length inputs once left-padded with 1 to a fixed width', () => {
    // ids rely on this: 16 bytes encode to at most 22 characters.
    const width = 22;
    const padded = (bytes: Uint8Array) => encodeBase58(bytes).padStart(width, '1');
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 16, maxLength: 16 }),
        fc.uint8Array({ minLength: 16, maxLength: 16 }),
        (a, b) => {
          expect(padded(a).length).toBe(width);
          const byBytes = Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b)));
          const byText = padded(a) < padded(b) ? -1 : padded(a) > padded(b) ? 1 : 0;
          expect(byText).toBe(byBytes);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('the largest 16-byte value still fits 22 characters', () => {
    expect(encodeBase58(new Uint8Array(16).fill(0xff))).toHaveLength(22);
  });
});

describe('isBase58', () => {
  test('accepts the alphabet and the empty string', () => {
    expect(isBase58(ALPHABET)).toBe(true);
    expect(isBase58('')).toBe(true);
  });

  test.each(['0', 'O', 'I', 'l', '_', '-', ' ', '+', '/', 'abc0', 'é'])('rejects %j', (text) => {
    expect(isBase58(text)).toBe(false);
  });
});

describe('encodeBase58Fixed and decodeBase58Fixed', () => {
  test.each([
    [0, '111111'],
    [57, '11111z'],
    [58, '111121'],
    [2 ** 32 - 1, '7YXq9G'],
    [58 ** 6 - 1, 'zzzzzz'],
  ])('%i is %j in 6 digits', (value, text) => {
    expect(encodeBase58Fixed(value, 6)).toBe(text);
    expect(decodeBase58Fixed(text, 0, 6)).toBe(value);
  });

  test('every 32-bit value round-trips through 6 digits, read at any offset', () => {
    fc.assert(
      fc.property(fc.nat({ max: 2 ** 32 - 1 }), fc.string({ maxLength: 5 }), (value, before) => {
        const text = encodeBase58Fixed(value, 6);
        expect(text).toHaveLength(6);
        expect(isBase58(text)).toBe(true);
        expect(decodeBase58Fixed(`${before}${text}`, before.length, 6)).toBe(value);
      }),
    );
  });

  test('agrees with the BigInt decoder above (left padding is leading 1s)', () => {
    fc.assert(
      fc.property(fc.nat({ max: 2 ** 32 - 1 }), (value) => {
        const bytes = decodeBase58(encodeBase58Fixed(value, 6).replace(/^1+/, ''));
        expect(bytes.reduce((sum, byte) => sum * 256 + byte, 0)).toBe(value);
      }),
    );
  });

  test.each(['11111O', '0zzzzz', 'I11111', '11l111', '11 111', '1111é1', 'zzzz'])(
    'refuses %j: a character base58 never writes, or too few',
    (text) => {
      expect(decodeBase58Fixed(text, 0, 6)).toBe(-1);
    },
  );

  test('base58Digit is the position in the alphabet, or -1', () => {
    for (let code = 0; code < 300; code++) {
      expect(base58Digit(code)).toBe(ALPHABET.indexOf(String.fromCharCode(code)));
    }
  });
});
