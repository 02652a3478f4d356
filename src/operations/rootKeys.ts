import { isValidPermission } from '../auth/permissions';
import { OPERATOR, type AuditEntry } from '../domain/audit';
import { invalidField, NotFoundError } from '../errors';
import { looksLikeId, newId } from '../keys/ids';
import { generateSecret } from '../keys/keyMaterial';
import type { RootKeyStore } from '../store/rootKeyStore';

export const ROOT_KEY_PREFIX = 'kwroot';
const ROOT_KEY_BYTES = 24;

/** A root key as an operator lists it: never its hash. */
export interface RootKeyListItem {
  id: string;
  name?: string;
  permissions: string[];
  createdAt: number;
}

export interface NewRootKey {
  workspaceId: string;
  keyId: string;
  /** The plaintext: printed once by the command line, stored only as its hash. */
  key: string;
}

/**
 * The audit entry of a root-key write: made out of band, by the operator at the command line
 * (`keyward audit` shows `operator`), under a request id of its own. Never the key or its hash.
 */
function operatorEntry(
  operation: string,
  rootKeyId: string,
  summary: Record<string, unknown> = {},
): AuditEntry {
  return {
    rootKeyId: OPERATOR,
    operation,
    requestId: newId('req'),
    targetType: 'root_key',
    targetId: rootKeyId,
    summary,
  };
}

/** Root keys are made out of band (the command line); a workspace is born with its first one. */
export async function createRootKey(
  store: RootKeyStore,
  options: { workspaceId?: string; name?: string; permissions?: readonly string[]; now?: number },
): Promise<NewRootKey> {
  const now = options.now ?? Date.now();
  // Full access only when asked for, with `*`: an empty list given by mistake must not grant it.
  if (options.permissions?.length === 0) {
    throw invalidField(['permissions'], 'name at least one permission, or * for every one');
  }
  const permissions = options.permissions ? [...options.permissions] : ['*'];
  for (const permission of permissions) {
    if (!isValidPermission(permission)) {
      throw invalidField(['permissions'], `"${permission}" is not resource.id.action or *`);
    }
  }
  let workspaceId = options.workspaceId;
  const newWorkspace = workspaceId === undefined;
  if (workspaceId === undefined) {
    workspaceId = newId('ws', now);
    await store.createWorkspace(workspaceId, now);
  } else if (!looksLikeId('ws', workspaceId) || !(await store.workspaceExists(workspaceId))) {
    throw new NotFoundError('workspace', `workspace ${workspaceId} not found`);
  }
  const material = generateSecret(ROOT_KEY_PREFIX, ROOT_KEY_BYTES);
  const keyId = newId('rk', now);
  const name = options.name ? { name: options.name } : {};
  await store.create(
    { id: keyId, workspaceId, permissions, createdAt: now, ...name },
    material.hash,
    operatorEntry('rootKeys.createRootKey', keyId, {
      ...name,
      permissions,
      ...(newWorkspace ? { newWorkspace: true } : {}),
    }),
  );
  return { workspaceId, keyId, key: material.plaintext };
}

/** A workspace's root keys, oldest first (ties by id, so the order is stable). */
export async function listRootKeys(
  store: Pick<RootKeyStore, 'list'>,
  workspaceId: string,
): Promise<RootKeyListItem[]> {
  const records = await store.list(workspaceId);
  return records
    .sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id))
    .map((record) => ({
      id: record.id,
      ...(record.name !== undefined ? { name: record.name } : {}),
      permissions: record.permissions,
      createdAt: record.createdAt,
    }));
}

/** Deletes a root key; every node drops it from its cache as the invalidation arrives. */
export async function revokeRootKey(
  store: Pick<RootKeyStore, 'revoke'>,
  workspaceId: string,
  rootKeyId: string,
): Promise<void> {
  const audit = operatorEntry('rootKeys.revokeRootKey', rootKeyId);
  if (!(await store.revoke(workspaceId, rootKeyId, audit))) {
    throw new NotFoundError('root_key', `root key ${rootKeyId} not found in ${workspaceId}`);
  }
}
