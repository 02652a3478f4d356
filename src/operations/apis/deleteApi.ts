import { NotFoundError } from '../../errors';
import { defineOperation } from '../operation';
import { empty, id } from '../schemas';

/** Keys deleted per round trip while an API is purged. */
const PURGE_BATCH = 100;

/**
 * Marks the API deleted (its keys stop verifying on every node as the invalidation arrives), then
 * purges its keys in batches. Interrupted, it leaves a marked API that a repeated call finishes.
 */
export const deleteApi = defineOperation({
  name: 'apis.deleteApi',
  method: 'POST',
  plane: 'management',
  summary: 'Deletes an API and every key of it; they stop verifying on every node within 100 ms.',
  permission: {
    resource: 'api',
    action: 'delete_api',
    scope: 'input',
    ids: (input: { apiId: string }) => [input.apiId],
  },
  input: { type: 'object', required: ['apiId'], properties: { apiId: id } },
  output: empty,
  uses: ['apis', 'keys', 'now'],
  async handle(deps, caller, input: { apiId: string }): Promise<Record<string, never>> {
    const ws = caller.rootKey.workspaceId;
    if (!(await deps.apis.markDeleted(ws, input.apiId, deps.now()))) {
      throw new NotFoundError(`api ${input.apiId} not found`);
    }
    for (;;) {
      const keyIds = await deps.keys.firstKeyIds(ws, input.apiId, PURGE_BATCH);
      if (keyIds.length === 0) break;
      await Promise.all(
        keyIds.map(async (keyId) => {
          // An index entry whose record is gone would otherwise be listed here forever.
          if (!(await deps.keys.delete(ws, keyId))) await deps.keys.unindex(ws, input.apiId, keyId);
        }),
      );
    }
    await deps.apis.remove(ws, input.apiId);
    return {};
  },
});
