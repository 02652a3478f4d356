import { NotFoundError } from '../../errors';
import { defineOperation } from '../operation';
import { empty, id } from '../schemas';
import { purgeKeys } from './purgeKeys';
import { auditEntry } from '../audit';

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
    if (
      !(await deps.apis.markDeleted(
        ws,
        input.apiId,
        deps.now(),
        auditEntry(caller, 'apis.deleteApi', 'api', input.apiId),
      ))
    ) {
      throw new NotFoundError('api', `api ${input.apiId} not found`);
    }
    await purgeKeys(deps, ws, input.apiId, (keyId) =>
      auditEntry(caller, 'apis.deleteApi', 'key', keyId, { apiId: input.apiId }),
    );
    await deps.apis.remove(ws, input.apiId);
    return {};
  },
});
