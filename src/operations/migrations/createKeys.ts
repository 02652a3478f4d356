import { ConflictError, invalidField, NotFoundError } from '../../errors';
import { newId } from '../../keys/ids';
import { checksumVerdict } from '../../keys/keyFormat';
import { hashKey, startOf } from '../../keys/keyMaterial';
import type { NewKey } from '../../store/keyStore';
import { newKeyFields, type KeyFieldsInput } from '../keys/fields';
import { linkIdentity } from '../keys/identityLink';
import { vaultToSeal } from '../keys/recoverable';
import { defineOperation } from '../operation';
import { id, newKeyFields as newKeyFieldsSchema, object, plaintextKey } from '../schemas';
import { auditEntry } from '../audit';

export interface ImportedKey extends KeyFieldsInput {
  apiId: string;
  /** The key as users hold it; or, when only its hash is known, `hash`. */
  plaintext?: string;
  hash?: { value: string; variant: 'sha256_base64' };
  prefix?: string;
  /** How to show the key when only its hash is imported. */
  start?: string;
  /** Sealed by the vault, to be shown again (given by plaintext only). */
  recoverable?: boolean;
}

const SHA256_BASE64 = /^[A-Za-z0-9+/]{43}=$/;

function material(item: ImportedKey, index: number): { hash: string; start: string } {
  if ((item.plaintext === undefined) === (item.hash === undefined)) {
    throw invalidField([index], 'give either plaintext or hash');
  }
  if (item.hash) {
    if (!SHA256_BASE64.test(item.hash.value)) {
      throw invalidField([index, 'hash', 'value'], 'must be a base64 SHA-256 (44 characters)');
    }
    return { hash: item.hash.value, start: item.start ?? '' };
  }
  const plaintext = item.plaintext!;
  // verifyKey refuses such a key before looking it up, so stored it could never verify.
  if (checksumVerdict(plaintext) === 'wrong') {
    throw invalidField(
      [index, 'plaintext'],
      "has keyward's key format but a wrong checksum, so it would never verify",
    );
  }
  const marker = item.prefix ? `${item.prefix}_` : undefined;
  const start =
    item.start ??
    (marker && plaintext.startsWith(marker)
      ? startOf(item.prefix, plaintext.slice(marker.length))
      : startOf(undefined, plaintext));
  return { hash: hashKey(plaintext), start };
}

/**
 * Moves existing keys in without their users changing them: up to 100 keys, by plaintext or by
 * hash, all created or none (a hash seen twice in the batch, or already stored, is 409).
 */
export const createKeys = defineOperation({
  name: 'migrations.createKeys',
  method: 'POST',
  plane: 'management',
  summary: 'Imports up to 100 existing keys, by plaintext or by hash: all of them or none.',
  permission: {
    resource: 'api',
    action: 'create_key',
    scope: 'input',
    ids: (input: ImportedKey[]) => input.map((item) => item.apiId),
  },
  input: {
    type: 'array',
    minItems: 1,
    maxItems: 100,
    items: {
      type: 'object',
      required: ['apiId'],
      properties: {
        plaintext: plaintextKey,
        hash: {
          type: 'object',
          required: ['value', 'variant'],
          properties: {
            value: { type: 'string', minLength: 1, maxLength: 64 },
            variant: { type: 'string', enum: ['sha256_base64'] },
          },
        },
        start: { type: 'string', maxLength: 32 },
        recoverable: { type: 'boolean' },
        ...newKeyFieldsSchema,
      },
    },
  },
  output: object({ keyIds: { type: 'array', items: id } }, ['keyIds']),
  uses: ['keys', 'now', 'identities', 'vault'],
  async handle(deps, caller, input: ImportedKey[]): Promise<{ keyIds: string[] }> {
    const ws = caller.rootKey.workspaceId;
    const now = deps.now();
    const seen = new Set<string>();
    const keys: NewKey[] = input.map((item, index) => {
      const { hash, start } = material(item, index);
      if (seen.has(hash))
        throw new ConflictError(undefined, `[${index}]: the same key appears twice in this batch`);
      seen.add(hash);
      const keyId = newId('key', now);
      const fields = newKeyFields(item, now, [index, 'remaining']);
      if (item.recoverable) {
        if (item.plaintext === undefined) {
          throw invalidField(
            [index, 'recoverable'],
            "needs the key's plaintext; a key imported by its hash cannot be shown again",
          );
        }
        const vault = vaultToSeal(deps, caller, item.apiId);
        fields.sealed = vault.seal(item.plaintext, { workspaceId: ws, keyId });
      }
      return { workspaceId: ws, apiId: item.apiId, keyId, hash, start, createdAt: now, fields };
    });
    // Only identities that exist are linked: a refused import must leave nothing behind.
    await Promise.all(keys.map((key) => linkIdentity(deps, ws, key.fields, now, 'existing')));
    const outcome = await deps.keys.importKeys(ws, keys, (key) =>
      auditEntry(caller, 'migrations.createKeys', 'key', key.keyId, { apiId: key.apiId }),
    );
    if (outcome !== 'imported') {
      const item = input[outcome.index]!;
      if (outcome.failure === 'api_not_found')
        throw new NotFoundError('api', `[${outcome.index}]: api ${item.apiId} not found`);
      throw new ConflictError('key', `[${outcome.index}]: a key with this hash exists already`);
    }
    return { keyIds: keys.map((key) => key.keyId) };
  },
});
