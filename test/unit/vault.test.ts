import { randomBytes } from 'node:crypto';
import { parseVaultKeys, Vault, VaultConfigError, VaultError } from '../../src/vault/vault';

const material = () => randomBytes(32).toString('base64');
const oldKey = `old:${material()}`;
const newKey = `new:${material()}`;
const binding = { workspaceId: 'ws_1', keyId: 'key_1' };
const plaintext = 'sk_3ZbGqJ8uYc1sPq';

const vaultOf = (raw: string) => new Vault(parseVaultKeys(raw));

describe('sealing', () => {
  test('a sealed key opens for its own workspace and key, and shows nothing of the plaintext', () => {
    const vault = vaultOf(oldKey);
    const sealed = vault.seal(plaintext, binding);
    expect(vault.open(sealed, binding)).toBe(plaintext);
    expect(sealed).not.toContain(plaintext);
    expect(sealed).not.toContain(Buffer.from(plaintext).toString('base64'));
    expect(sealed.startsWith('v1.old.')).toBe(true);
    // A fresh data key and IVs every time.
    expect(vault.seal(plaintext, binding)).not.toBe(sealed);
  });

  test('copied onto another key or into another workspace, it does not open', () => {
    const vault = vaultOf(oldKey);
    const sealed = vault.seal(plaintext, binding);
    for (const other of [
      { workspaceId: 'ws_1', keyId: 'key_2' },
      { workspaceId: 'ws_2', keyId: 'key_1' },
      // Length-prefixed fields: no shift of characters between them makes the same binding.
      { workspaceId: 'ws_1k', keyId: 'ey_1' },
    ]) {
      expect(() => vault.open(sealed, other)).toThrow(
        new VaultError(
          'the stored ciphertext does not open: it was altered, or belongs to another key',
          'unreadable',
        ),
      );
    }
  });

  test('any altered part fails clearly, never as garbage', () => {
    const vault = vaultOf(oldKey);
    const sealed = vault.seal(plaintext, binding);
    const [version, kek, wrapped, body] = sealed.split('.') as [string, string, string, string];
    const flip = (part: string, at: number) => {
      const bytes = Buffer.from(part, 'base64url');
      bytes[at % bytes.length]! ^= 1;
      return bytes.toString('base64url');
    };
    const altered = [
      [version, kek, flip(wrapped, 0), body],
      [version, kek, flip(wrapped, 20), body],
      [version, kek, wrapped, flip(body, 5)],
      [version, kek, wrapped, flip(body, 40)],
      [version, kek, wrapped, body.slice(0, 10)],
      ['v2', kek, wrapped, body],
      [version, kek, wrapped],
      [version, kek, wrapped, `${body}!`],
    ].map((parts) => parts.join('.'));
    for (const text of [...altered, '', 'plain']) {
      expect(() => vault.open(text, binding)).toThrow(VaultError);
    }
  });

  test('a key sealed under a KEK this node does not have names the KEK, not the key', () => {
    const sealed = vaultOf(oldKey).seal(plaintext, binding);
    const error = (() => {
      try {
        vaultOf(newKey).open(sealed, binding);
      } catch (caught) {
        return caught as VaultError;
      }
      throw new Error('opened');
    })();
    expect(error.reason).toBe('unknown-kek');
    expect(error.message).toBe(
      'the key was sealed under vault key "old", which KEYWARD_VAULT_KEYS does not list',
    );
    // The same id with other material is a wrong key: it does not open either.
    expect(() => vaultOf(`old:${material()}`).open(sealed, binding)).toThrow(VaultError);
  });
});

describe('rotation', () => {
  test('rewrapping moves the data key under the first KEK; then only the new KEK is needed', () => {
    const sealed = vaultOf(oldKey).seal(plaintext, binding);
    const both = vaultOf(`${newKey},${oldKey}`);
    expect(both.open(sealed, binding)).toBe(plaintext);
    const rewrapped = both.rewrap(sealed, binding)!;
    expect(Vault.kekIdOf(rewrapped)).toBe('new');
    // The plaintext's own seal is kept: only the wrapping changed.
    expect(rewrapped.split('.')[3]).toBe(sealed.split('.')[3]);
    expect(vaultOf(newKey).open(rewrapped, binding)).toBe(plaintext);
    // Idempotent: already under the first KEK.
    expect(both.rewrap(rewrapped, binding)).toBeUndefined();
    // A ciphertext that would not open is never rewrapped.
    expect(() => both.rewrap(sealed, { workspaceId: 'ws_1', keyId: 'key_9' })).toThrow(VaultError);
  });

  test('the first KEK seals', () => {
    expect(vaultOf(`${newKey},${oldKey}`).sealingKekId).toBe('new');
    expect(Vault.kekIdOf(vaultOf(`${newKey},${oldKey}`).seal('x', binding))).toBe('new');
  });
});

describe('KEYWARD_VAULT_KEYS', () => {
  test('a list of <id>:<base64 of 32 bytes>, spaces around entries allowed', () => {
    const keys = parseVaultKeys(` ${newKey} , ${oldKey}`);
    expect(keys.map((key) => key.id)).toEqual(['new', 'old']);
    expect(keys.every((key) => key.key.length === 32)).toBe(true);
  });

  test.each([
    ['', 'entry 1 is not <id>:<base64 of 32 bytes> (the id: 1-64 of A-Z a-z 0-9 _ -)'],
    ['abc', 'entry 1 is not <id>:<base64 of 32 bytes> (the id: 1-64 of A-Z a-z 0-9 _ -)'],
    [`${oldKey},`, 'entry 2 is not <id>:<base64 of 32 bytes> (the id: 1-64 of A-Z a-z 0-9 _ -)'],
    [
      `a b:${material()}`,
      'entry 1 is not <id>:<base64 of 32 bytes> (the id: 1-64 of A-Z a-z 0-9 _ -)',
    ],
    [`k:${randomBytes(31).toString('base64')}`, 'key "k" is not the base64 of exactly 32 bytes'],
    [`k:${randomBytes(33).toString('base64')}`, 'key "k" is not the base64 of exactly 32 bytes'],
    ['k:not base64 at all!', 'key "k" is not the base64 of exactly 32 bytes'],
    [`k:${material()},k:${material()}`, 'key id "k" is listed twice'],
  ])('%j is refused: %s', (raw, message) => {
    expect(() => parseVaultKeys(raw)).toThrow(new VaultConfigError(message));
  });

  test('a refusal never repeats the key material', () => {
    const secret = randomBytes(31).toString('base64');
    try {
      parseVaultKeys(`k:${secret}`);
    } catch (error) {
      expect((error as Error).message).not.toContain(secret);
      return;
    }
    throw new Error('accepted');
  });
});
