import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Envelope encryption of recoverable keys. Each plaintext is sealed with AES-256-GCM under a data
 * key of its own; the data key is sealed (wrapped) under a key-encryption key (KEK) from
 * KEYWARD_VAULT_KEYS, whose id travels with the ciphertext so that any node holding that KEK can
 * open it. Both seals take the key's workspace and id as associated data: a ciphertext copied onto
 * another key, or into another workspace, does not open. KEKs never leave this module's memory.
 *
 * Sealed form (one string, what Redis holds): `v1.<kekId>.<wrapped>.<sealed>`, each part base64url,
 * `wrapped` = iv ‖ tag ‖ AES-GCM(data key) under the KEK, `sealed` = iv ‖ tag ‖ AES-GCM(plaintext)
 * under the data key.
 */

const VERSION = 'v1';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEK_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** What a sealed secret belongs to: it opens only for the same workspace and key. */
export interface SealBinding {
  workspaceId: string;
  keyId: string;
}

/** Why a sealed secret did not open; the message names no secret. */
export class VaultError extends Error {
  constructor(
    message: string,
    readonly reason: 'unknown-kek' | 'unreadable',
  ) {
    super(message);
  }
}

/** KEYWARD_VAULT_KEYS was not `<id>:<base64 of 32 bytes>[,…]`; the message names no key. */
export class VaultConfigError extends Error {}

/** One key-encryption key of KEYWARD_VAULT_KEYS. */
export interface VaultKey {
  id: string;
  key: Buffer;
}

type Kek = VaultKey;

/**
 * Parses KEYWARD_VAULT_KEYS: a comma-separated list of `<id>:<base64 of 32 bytes>`, the first one
 * sealing, all of them opening. Ids are 1–64 of `[A-Za-z0-9_-]` and unique.
 */
export function parseVaultKeys(raw: string): Kek[] {
  const keks: Kek[] = [];
  const entries = raw.split(',').map((entry) => entry.trim());
  entries.forEach((entry, index) => {
    const colon = entry.indexOf(':');
    const id = colon < 0 ? '' : entry.slice(0, colon);
    const encoded = colon < 0 ? '' : entry.slice(colon + 1);
    if (!KEK_ID.test(id)) {
      throw new VaultConfigError(
        `entry ${index + 1} is not <id>:<base64 of 32 bytes> (the id: 1-64 of A-Z a-z 0-9 _ -)`,
      );
    }
    const key = /^[A-Za-z0-9+/]+={0,2}$/.test(encoded) ? Buffer.from(encoded, 'base64') : undefined;
    if (key?.length !== KEY_BYTES) {
      throw new VaultConfigError(`key "${id}" is not the base64 of exactly 32 bytes`);
    }
    if (keks.some((kek) => kek.id === id)) {
      throw new VaultConfigError(`key id "${id}" is listed twice`);
    }
    keks.push({ id, key });
  });
  return keks;
}

function associatedData(binding: SealBinding, part: 'data-key' | 'plaintext'): Buffer {
  // Length-prefixed, so that no two bindings encode alike.
  const fields = [VERSION, part, binding.workspaceId, binding.keyId];
  return Buffer.from(fields.map((field) => `${field.length}:${field}`).join('|'), 'utf8');
}

function seal(key: Buffer, message: Buffer, aad: Buffer): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad);
  const body = Buffer.concat([cipher.update(message), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

/** undefined when the tag does not verify: a wrong key, other associated data, or tampering. */
function open(key: Buffer, sealed: Buffer, aad: Buffer): Buffer | undefined {
  if (sealed.length < IV_BYTES + TAG_BYTES) return undefined;
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
  decipher.setAAD(aad);
  decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  try {
    return Buffer.concat([
      decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)),
      decipher.final(),
    ]);
  } catch {
    return undefined;
  }
}

/** The plaintext of `body` under `dataKey`; VaultError when it does not open for `binding`. */
function openBody(dataKey: Buffer, body: Buffer, binding: SealBinding): Buffer {
  const plaintext = open(dataKey, body, associatedData(binding, 'plaintext'));
  if (!plaintext) throw unreadable();
  return plaintext;
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;

export class Vault {
  private readonly keks: Kek[];

  constructor(keks: readonly Kek[]) {
    if (keks.length === 0) throw new VaultConfigError('no key');
    this.keks = keks.map(({ id, key }) => ({ id, key: Buffer.from(key) }));
  }

  /** The id of the KEK that seals; the others only open. */
  get sealingKekId(): string {
    return this.keks[0]!.id;
  }

  /** Seals `plaintext` for one key under a fresh data key, wrapped by the first KEK. */
  seal(plaintext: string, binding: SealBinding): string {
    const dataKey = randomBytes(KEY_BYTES);
    try {
      const body = seal(
        dataKey,
        Buffer.from(plaintext, 'utf8'),
        associatedData(binding, 'plaintext'),
      );
      return this.wrapUnderFirst(dataKey, body, binding);
    } finally {
      dataKey.fill(0);
    }
  }

  /** The plaintext sealed for this key; VaultError when it cannot be opened here. */
  open(sealed: string, binding: SealBinding): string {
    const parts = this.parse(sealed);
    const dataKey = this.unwrap(parts, binding);
    try {
      return openBody(dataKey, parts.body, binding).toString('utf8');
    } finally {
      dataKey.fill(0);
    }
  }

  /**
   * The same secret with its data key wrapped by the first KEK instead (the plaintext's seal is
   * kept as it is); undefined when it already is. VaultError when it cannot be opened here.
   */
  rewrap(sealed: string, binding: SealBinding): string | undefined {
    const parts = this.parse(sealed);
    if (parts.kekId === this.sealingKekId) return undefined;
    const dataKey = this.unwrap(parts, binding);
    try {
      // The body must open too: a rewrap never blesses a ciphertext that would not decrypt.
      openBody(dataKey, parts.body, binding).fill(0);
      return this.wrapUnderFirst(dataKey, parts.body, binding);
    } finally {
      dataKey.fill(0);
    }
  }

  /** The sealed form of `body`: its data key wrapped by the first KEK, and the KEK's id. */
  private wrapUnderFirst(dataKey: Buffer, body: Buffer, binding: SealBinding): string {
    const kek = this.keks[0]!;
    const wrapped = seal(kek.key, dataKey, associatedData(binding, 'data-key'));
    return [VERSION, kek.id, wrapped.toString('base64url'), body.toString('base64url')].join('.');
  }

  /** The id of the KEK a sealed secret's data key is wrapped by, or undefined if unreadable. */
  static kekIdOf(sealed: string): string | undefined {
    const parts = sealed.split('.');
    return parts.length === 4 && parts[0] === VERSION ? parts[1] : undefined;
  }

  private parse(sealed: string): { kekId: string; wrapped: Buffer; body: Buffer } {
    const parts = sealed.split('.');
    if (
      parts.length !== 4 ||
      parts[0] !== VERSION ||
      !parts.slice(1).every((part) => BASE64URL.test(part))
    ) {
      throw unreadable();
    }
    return {
      kekId: parts[1]!,
      wrapped: Buffer.from(parts[2]!, 'base64url'),
      body: Buffer.from(parts[3]!, 'base64url'),
    };
  }

  private unwrap(parts: { kekId: string; wrapped: Buffer }, binding: SealBinding): Buffer {
    const kek = this.keks.find((candidate) => candidate.id === parts.kekId);
    if (!kek) {
      throw new VaultError(
        `the key was sealed under vault key "${parts.kekId}", which KEYWARD_VAULT_KEYS does not list`,
        'unknown-kek',
      );
    }
    const dataKey = open(kek.key, parts.wrapped, associatedData(binding, 'data-key'));
    if (!dataKey || dataKey.length !== KEY_BYTES) throw unreadable();
    return dataKey;
  }
}

const unreadable = () =>
  new VaultError(
    'the stored ciphertext does not open: it was altered, or belongs to another key',
    'unreadable',
  );
