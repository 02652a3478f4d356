import { decodeBase58Fixed, encodeBase58Fixed } from './base58';
import { crc32 } from './crc32';

/**
 * The format of the keys keyward generates (docs/security.md, "The key format"):
 *
 *     [<prefix>_]<random><marker><checksum>     sk_live_BsUqqe31u2jZ4uWG6yErSr0kw102xGL6D
 *
 * - `prefix`: the caller's, as given to createKey (PREFIX_PATTERN), and its `_`; or nothing.
 * - `random`: base58 of `byteLength` random bytes, as before this format.
 * - `marker`: `0kw10`, the format's version (`kw1`) between two zeros. Base58 never writes a `0`,
 *   and one mistyped character removes at most one of the two, which is how a mistyped key is
 *   still recognised below.
 * - `checksum`: the CRC-32 of every character before it (prefix, `_`, random part and marker),
 *   in base58, 6 characters, left-padded with `1`. 58⁶ > 2³², so every CRC has one spelling.
 */
export const KEY_MARKER = '0kw10';
export const CHECKSUM_LENGTH = 6;
/** Marker and checksum: the fixed-width end of every checksummed key. */
const TAIL_LENGTH = KEY_MARKER.length + CHECKSUM_LENGTH;
/** The marker's characters: `0`, `k`, `w`, `1`, `0`. */
const ZERO = 0x30;
const LOWER_K = 0x6b;
const LOWER_W = 0x77;
const ONE = 0x31;

/**
 * A whole generated key, for a secret scanner (docs/security.md gives the boundaries to use
 * with it). The verifier does not use it: it looks only at the end of a key.
 */
export const KEY_PATTERN =
  '(?:[A-Za-z0-9_-]{1,16}_)?[1-9A-HJ-NP-Za-km-z]{16,349}0kw10[1-9A-HJ-NP-Za-km-z]{6}';

/** The checksum that ends a key whose other characters are `head`. */
export function checksumOf(head: string): string {
  return encodeBase58Fixed(crc32(head), CHECKSUM_LENGTH);
}

/**
 * - `valid`: the key ends in the marker and the right checksum.
 * - `wrong`: the key ends in the marker and a wrong checksum, or it is one mistyped character
 *   away from a key with a right one (see `mistyped`): no key keyward stores can be this string.
 * - `none`: not a checksummed key. Every key generated before this format (its end is base58,
 *   which has no `0`), and keys imported from elsewhere: verified by their hash, as they were.
 */
export type ChecksumVerdict = 'valid' | 'wrong' | 'none';

/**
 * The offline check that runs before a key is hashed or looked up. On a valid key it reads the
 * 5 marker characters, decodes 6 base58 digits and computes one CRC-32, and allocates nothing.
 */
export function checksumVerdict(key: string): ChecksumVerdict {
  if (hasMarker(key)) return hasRightChecksum(key) ? 'valid' : 'wrong';
  return mistyped(key) ? 'wrong' : 'none';
}

/**
 * The marker is in its place, right before the checksum's 6 characters. Compared a character
 * at a time: `startsWith` at an offset took 15–19 ns here against 11.
 */
function hasMarker(key: string): boolean {
  const at = key.length - TAIL_LENGTH;
  return (
    at >= 0 &&
    key.charCodeAt(at) === ZERO &&
    key.charCodeAt(at + 1) === LOWER_K &&
    key.charCodeAt(at + 2) === LOWER_W &&
    key.charCodeAt(at + 3) === ONE &&
    key.charCodeAt(at + 4) === ZERO
  );
}

/** The 6 characters ending `key` are the base58 CRC-32 of the others. */
function hasRightChecksum(key: string): boolean {
  const n = key.length;
  const stated = decodeBase58Fixed(key, n - CHECKSUM_LENGTH, CHECKSUM_LENGTH);
  return stated >= 0 && stated === crc32(key, 0, n - CHECKSUM_LENGTH);
}

/** Where one mistyped character can move the marker's characters: the key's last 13. */
const NEAR_END = TAIL_LENGTH + 2;

/**
 * Whether `key` is one edit (a character replaced, dropped, added, or two neighbours swapped)
 * away from a key with a right checksum, the edit having damaged or moved the marker or changed
 * the checksum's length. An edit anywhere else leaves the marker in its place, and the CRC
 * refuses the key then. Each candidate below is the key as it would have been before such an
 * edit; it counts only when its checksum is right, so a key that merely looks similar is left
 * to the lookup (one in 2³² of those is refused: docs/security.md).
 *
 * Such a key still has a `0`, and a `k` or a `w`, among its last 13 characters: one edit takes
 * away at most one of the marker's two zeros, and at most one of its `k` and `w`. A key
 * generated before this format ends in at least 16 base58 characters, none of them a `0`, so it
 * never gets past that first test; nor do base58, hex or UUID keys. Only what passes it pays for
 * the candidates (a few short strings and CRCs).
 */
function mistyped(key: string): boolean {
  const n = key.length;
  if (n <= NEAR_END) return false;
  let zero = false;
  let kw = false;
  for (let i = n - NEAR_END; i < n; i++) {
    const code = key.charCodeAt(i);
    if (code === ZERO) zero = true;
    else if (code === LOWER_K || code === LOWER_W) kw = true;
  }
  if (!zero || !kw) return false;

  const checksumAt = n - CHECKSUM_LENGTH;
  const markerAt = checksumAt - KEY_MARKER.length;
  const checksum = key.slice(checksumAt);
  const candidates = [
    // The checksum intact, the marker before it damaged in place (a character replaced, two
    // swapped), short of a character, or with one too many (also one added after it).
    key.slice(0, markerAt) + KEY_MARKER + checksum,
    key.slice(0, markerAt + 1) + KEY_MARKER + checksum,
    key.slice(0, markerAt - 1) + KEY_MARKER + checksum,
    // The marker's first character swapped with the one before it.
    key.slice(0, markerAt - 1) + key.charAt(markerAt) + KEY_MARKER + checksum,
    // The marker's last character swapped with the checksum's first.
    key.slice(0, checksumAt - 1) +
      key.charAt(checksumAt) +
      key.charAt(checksumAt - 1) +
      key.slice(checksumAt + 1),
  ];
  for (const candidate of candidates) {
    if (hasMarker(candidate) && hasRightChecksum(candidate)) return true;
  }
  // The checksum short of a character, or with one too many: the marker ends 1 later or earlier.
  for (const headEnd of [checksumAt + 1, checksumAt - 1]) {
    if (key.startsWith(KEY_MARKER, headEnd - KEY_MARKER.length)) {
      const right = checksumOf(key.slice(0, headEnd));
      if (oneAddedOrDropped(right, key.slice(headEnd))) return true;
    }
  }
  return false;
}

/** Whether `b` is `a` with one character dropped or one added. */
function oneAddedOrDropped(a: string, b: string): boolean {
  const [longer, shorter] = a.length > b.length ? [a, b] : [b, a];
  if (longer.length !== shorter.length + 1) return false;
  let i = 0;
  while (i < shorter.length && longer[i] === shorter[i]) i++;
  return longer.slice(i + 1) === shorter.slice(i);
}
