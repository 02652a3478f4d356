import { permissionFor } from '../auth/permissions';
import { BadRequestError, ConflictError, NotFoundError } from '../errors';
import { newId } from '../keys/ids';
import { hashKey, startOf } from '../keys/keyMaterial';
import type { NewKey } from '../store/keyStore';
import { toKeyFields, type KeyFieldsInput } from './keys';
import { requirePermission, type Caller, type Services } from './services';

export interface ImportedKey extends KeyFieldsInput {
  apiId: string;
  /** The key as users hold it; or, when only its hash is known, `hash`. */
  plaintext?: string;
  hash?: { value: string; variant: 'sha256_base64' };
  prefix?: string;
  /** How to show the key when only its hash is imported. */
  start?: string;
}

const SHA256_BASE64 = /^[A-Za-z0-9+/]{43}=$/;

function material(item: ImportedKey, index: number): { hash: string; start: string } {
  if ((item.plaintext === undefined) === (item.hash === undefined)) {
    throw new BadRequestError(`[${index}]: give either plaintext or hash`);
  }
  if (item.hash) {
    if (!SHA256_BASE64.test(item.hash.value)) {
      throw new BadRequestError(`[${index}].hash.value: must be a base64 SHA-256 (44 characters)`);
    }
    return { hash: item.hash.value, start: item.start ?? '' };
  }
  const plaintext = item.plaintext!;
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
export async function createKeys(
  services: Services,
  caller: Caller,
  input: ImportedKey[],
): Promise<{ keyIds: string[] }> {
  for (const item of input)
    requirePermission(caller, permissionFor('api', item.apiId, 'create_key'));
  const ws = caller.rootKey.workspaceId;
  const now = services.now();
  const seen = new Set<string>();
  const keys: NewKey[] = input.map((item, index) => {
    const { hash, start } = material(item, index);
    if (seen.has(hash))
      throw new ConflictError(`[${index}]: the same key appears twice in this batch`);
    seen.add(hash);
    if (item.remaining === null) throw new BadRequestError(`[${index}].remaining: must be integer`);
    const fields = toKeyFields(item, now, false);
    fields.enabled = item.enabled ?? true;
    return {
      workspaceId: ws,
      apiId: item.apiId,
      keyId: newId('key', now),
      hash,
      start,
      createdAt: now,
      fields,
    };
  });
  const outcome = await services.keys.importKeys(ws, keys);
  if (outcome !== 'imported') {
    const item = input[outcome.index]!;
    if (outcome.failure === 'api_not_found')
      throw new NotFoundError(`[${outcome.index}]: api ${item.apiId} not found`);
    throw new ConflictError(`[${outcome.index}]: a key with this hash exists already`);
  }
  for (const key of keys)
    services.directory.apply({ kind: 'key', workspaceId: ws, hash: key.hash, created: true });
  return { keyIds: keys.map((key) => key.keyId) };
}
