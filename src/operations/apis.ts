import { BadRequestError, NotFoundError } from '../errors';
import { permissionFor } from '../auth/permissions';
import { newId } from '../keys/ids';
import { requirePermission, type Caller, type Services } from './services';
import { keyViews, ownerIdOf } from './keys';
import { apiView, type ApiView, type KeyView } from './views';

/** Keys deleted per round trip while an API is purged. */
const PURGE_BATCH = 100;

export async function createApi(
  services: Services,
  caller: Caller,
  input: { name: string },
): Promise<{ apiId: string; name: string }> {
  requirePermission(caller, permissionFor('api', '*', 'create_api'));
  const now = services.now();
  const apiId = newId('api', now);
  await services.apis.create({
    id: apiId,
    workspaceId: caller.rootKey.workspaceId,
    name: input.name,
    createdAt: now,
  });
  caller.logFields.apiId = apiId;
  return { apiId, name: input.name };
}

export async function getApi(
  services: Services,
  caller: Caller,
  input: { apiId: string },
): Promise<ApiView> {
  requirePermission(caller, permissionFor('api', input.apiId, 'read_api'));
  const api = await services.apis.get(caller.rootKey.workspaceId, input.apiId);
  if (!api || api.deletedAt !== undefined) throw new NotFoundError(`api ${input.apiId} not found`);
  return apiView(api);
}

/**
 * Marks the API deleted (its keys stop verifying on every node as the invalidation arrives), then
 * purges its keys in batches. Interrupted, it leaves a marked API that a repeated call finishes.
 */
export async function deleteApi(
  services: Services,
  caller: Caller,
  input: { apiId: string },
): Promise<Record<string, never>> {
  requirePermission(caller, permissionFor('api', input.apiId, 'delete_api'));
  const ws = caller.rootKey.workspaceId;
  if (!(await services.apis.markDeleted(ws, input.apiId, services.now()))) {
    throw new NotFoundError(`api ${input.apiId} not found`);
  }
  services.directory.apply({ kind: 'api', workspaceId: ws, apiId: input.apiId });
  for (;;) {
    const keyIds = await services.keys.firstKeyIds(ws, input.apiId, PURGE_BATCH);
    if (keyIds.length === 0) break;
    await Promise.all(
      keyIds.map(async (keyId) => {
        // An index entry whose record is gone would otherwise be listed here forever.
        if (!(await services.keys.delete(ws, keyId)))
          await services.keys.unindex(ws, input.apiId, keyId);
      }),
    );
  }
  await services.apis.remove(ws, input.apiId);
  return {};
}

/** keyward's own addition (v1 has no such call): the dashboard lists APIs with it. */
export async function listApis(
  services: Services,
  caller: Caller,
  input: { limit?: number; cursor?: string },
): Promise<{ apis: ApiView[]; cursor?: string; total: number }> {
  requirePermission(caller, permissionFor('api', '*', 'read_api'));
  const page = await services.apis.list(caller.rootKey.workspaceId, {
    limit: input.limit ?? 100,
    ...(input.cursor !== undefined ? { afterId: input.cursor } : {}),
  });
  return {
    apis: page.apis.map(apiView),
    total: page.total,
    ...(page.next !== undefined ? { cursor: page.next } : {}),
  };
}

const CURSOR = /^\d{1,15}$/;

export async function listKeys(
  services: Services,
  caller: Caller,
  input: { apiId: string; limit?: number; cursor?: string; ownerId?: string; externalId?: string },
): Promise<{ keys: KeyView[]; cursor?: string; total: number }> {
  requirePermission(caller, permissionFor('api', input.apiId, 'read_key'));
  if (input.cursor !== undefined && !CURSOR.test(input.cursor)) {
    throw new BadRequestError('cursor: is not a cursor this server returned');
  }
  const ws = caller.rootKey.workspaceId;
  const api = await services.apis.get(ws, input.apiId);
  if (!api || api.deletedAt !== undefined) throw new NotFoundError(`api ${input.apiId} not found`);
  const ownerId = ownerIdOf(input) ?? undefined;
  const page = await services.keys.list(ws, input.apiId, {
    limit: input.limit ?? 100,
    ...(input.cursor !== undefined ? { afterSeq: Number(input.cursor) } : {}),
    ...(ownerId !== undefined ? { ownerId } : {}),
  });
  return {
    keys: await keyViews(services, page.keys),
    total: page.total,
    ...(page.more && page.lastSeq !== undefined ? { cursor: String(page.lastSeq) } : {}),
  };
}
