import { hash, randomBytes } from 'node:crypto';
import { encodeBase58 } from './base58';
import { checksumOf, KEY_MARKER } from './keyFormat';

export const DEFAULT_BYTE_LENGTH = 16;
export const MIN_BYTE_LENGTH = 16;
export const MAX_BYTE_LENGTH = 255;
export const PREFIX_PATTERN = '^[A-Za-z0-9_-]{1,16}$';

export interface KeyMaterial {
  /** The secret, shown to the caller once and never stored. */
  plaintext: string;
  /** base64(sha256(plaintext)): the only form in which a key is stored or looked up. */
  hash: string;
  /** Enough of the key for a person to recognise it: prefix, `_`, and 4 characters. */
  start: string;
}

/**
 * A new key: `[<prefix>_]<random>0kw10<checksum>` (src/keys/keyFormat.ts), with `byteLength`
 * random bytes. `start` shows the prefix and the first 4 random characters, as it always did.
 */
export function generateKey(
  prefix: string | undefined,
  byteLength = DEFAULT_BYTE_LENGTH,
): KeyMaterial {
  const random = encodeBase58(randomBytes(byteLength));
  const head = `${prefix ? `${prefix}_` : ''}${random}${KEY_MARKER}`;
  const plaintext = head + checksumOf(head);
  return { plaintext, hash: hashKey(plaintext), start: startOf(prefix, random) };
}

/**
 * A secret without the checksum: `[<prefix>_]<random>`, the shape every key had before it. Root
 * keys keep it (`kwroot_` marks them already; authentication does not check a checksum).
 */
export function generateSecret(prefix: string | undefined, byteLength: number): KeyMaterial {
  const random = encodeBase58(randomBytes(byteLength));
  const plaintext = prefix ? `${prefix}_${random}` : random;
  return { plaintext, hash: hashKey(plaintext), start: startOf(prefix, random) };
}

/** Every verification hashes two secrets: the one-shot `hash` is about 3 × faster than a Hash. */
export function hashKey(plaintext: string): string {
  return hash('sha256', plaintext, 'base64');
}

export function startOf(prefix: string | undefined, body: string): string {
  return prefix ? `${prefix}_${body.slice(0, 4)}` : body.slice(0, 4);
}

const PREFIX = new RegExp(PREFIX_PATTERN);

/**
 * The prefix a key's `start` shows: everything before its last `_`. A generated body is base58,
 * which has no `_`, so for every key keyward made this is exactly the prefix it was made with
 * (`sk_live_M8Vu` → `sk_live`; `M8Vu` → none). An imported key's `start` was given by its
 * importer; one that does not read as a prefix keyward could make gives none.
 */
export function prefixOf(start: string): string | undefined {
  const end = start.lastIndexOf('_');
  if (end < 0) return undefined;
  const prefix = start.slice(0, end);
  return PREFIX.test(prefix) ? prefix : undefined;
}
