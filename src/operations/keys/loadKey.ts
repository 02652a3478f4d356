import { permissionFor } from '../../auth/permissions';
import type { KeyRecord } from '../../domain/key';
import { NotFoundError } from '../../errors';
import { requirePermission, type Caller } from '../operation';
import type { Services } from '../services';

/**
 * The key of this workspace, with the caller allowed `action` on its API. A key of a deleted API,
 * or of another workspace, is as not found as one that never existed.
 */
export async function loadKey(
  deps: Pick<Services, 'keys' | 'directory'>,
  caller: Caller,
  keyId: string,
  action: string,
  /** Read the key's `lastUsedAt` too (a view). */
  options: { lastUse?: boolean } = {},
): Promise<KeyRecord> {
  caller.logFields.keyId = keyId;
  const key = await deps.keys.get(caller.rootKey.workspaceId, keyId, options);
  if (!key || !(await deps.directory.liveApi(key.workspaceId, key.apiId))) {
    throw new NotFoundError('key', `key ${keyId} not found`);
  }
  requirePermission(caller, permissionFor('api', key.apiId, action));
  return key;
}

/** The input of an operation on one key. */
export const keyIdInput = {
  type: 'object',
  required: ['keyId'],
  properties: { keyId: { type: 'string', minLength: 1, maxLength: 64 } },
} as const;
