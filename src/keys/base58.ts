const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** Each character code's base58 digit, or -1 for a character base58 never writes. */
const DIGITS = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DIGITS[ALPHABET.charCodeAt(i)] = i;

/** Bitcoin-style base58: every leading zero byte becomes a leading '1'. */
export function encodeBase58(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  // Repeated division of a big-endian number held as base-58 digits; O(n²) is fine for ≤ 255 bytes.
  const digits: number[] = [];
  for (let i = zeros; i < bytes.length; i++) {
    let carry = bytes[i] as number;
    for (let j = 0; j < digits.length; j++) {
      carry += (digits[j] as number) << 8;
      digits[j] = carry % 58;
      carry = (carry / 58) | 0;
    }
    while (carry > 0) {
      digits.push(carry % 58);
      carry = (carry / 58) | 0;
    }
  }
  let out = '1'.repeat(zeros);
  for (let i = digits.length - 1; i >= 0; i--) out += ALPHABET[digits[i] as number];
  return out;
}

export function isBase58(text: string): boolean {
  for (const ch of text) if (!ALPHABET.includes(ch)) return false;
  return true;
}

/** The base58 digit of a character code, or -1 when base58 never writes that character. */
export function base58Digit(code: number): number {
  return code < 128 ? (DIGITS[code] as number) : -1;
}

/**
 * A non-negative integer (at most 2⁵³ − 1) in exactly `width` base58 digits, most significant
 * first, left-padded with '1' (the digit 0). The caller makes sure 58^width exceeds the value.
 */
export function encodeBase58Fixed(value: number, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = ALPHABET[value % 58] + out;
    value = Math.floor(value / 58);
  }
  return out;
}

/**
 * The integer that `width` base58 digits of `text` from `start` spell, most significant first;
 * -1 when one of them is not a base58 digit (or the text is too short). Allocates nothing.
 */
export function decodeBase58Fixed(text: string, start: number, width: number): number {
  if (start < 0 || start + width > text.length) return -1;
  let value = 0;
  for (let i = start; i < start + width; i++) {
    const digit = base58Digit(text.charCodeAt(i));
    if (digit < 0) return -1;
    value = value * 58 + digit;
  }
  return value;
}
