/**
 * CRC-32 as zlib, PNG and GitHub's tokens compute it (reflected polynomial 0xEDB88320, initial
 * value and final XOR 0xFFFFFFFF), over the characters of a string taken as bytes: keyward's keys
 * are ASCII, and for ASCII this is the CRC-32 of the string's UTF-8. test/unit/crc32.test.ts holds
 * it to the standard check value and to Node's `zlib.crc32`.
 *
 * Why not `zlib.crc32` itself: it takes a whole string or buffer, so checking a key's checksum
 * would need `key.slice(0, -6)` first. Measured on the benchmark machine (Node 20.20), slice plus
 * `zlib.crc32` took 137–141 ns per 36-character key and this loop 62–68 ns, without allocating;
 * the check runs on every verification (docs/performance.md).
 */
const TABLE = new Int32Array(256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  TABLE[n] = c;
}

/**
 * The CRC-32 of `text` from `start` up to (not including) `end`, continuing from `crc` (the CRC
 * of what came before, 0 for nothing), as an unsigned 32-bit integer.
 */
export function crc32(text: string, start = 0, end = text.length, crc = 0): number {
  let c = ~crc;
  for (let i = start; i < end; i++) {
    c = (TABLE[(c ^ text.charCodeAt(i)) & 0xff] as number) ^ (c >>> 8);
  }
  return ~c >>> 0;
}
