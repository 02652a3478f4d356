import { NotFoundError } from '../../errors';
import { defineOperation } from '../operation';
import { id, object } from '../schemas';
import { purgeKeys } from './purgeKeys';
import { auditEntry } from '../audit';

interface DeleteKeysInput {
  apiId: string;
  /** Unkey keeps soft-deleted keys unless asked; keyward keeps none, so both delete. */
  permanent?: boolean;
}

export const deleteKeys = defineOperation({
  name: 'apis.deleteKeys',
  method: 'POST',
  plane: 'management',
  summary: 'Deletes every key of an API and keeps the API; they stop verifying on every node.',
  permission: {
    resource: 'api',
    action: 'delete_key',
    scope: 'input',
    ids: (input: DeleteKeysInput) => [input.apiId],
  },
  input: object({ apiId: id, permanent: { type: 'boolean' } }, ['apiId']),
  output: object({ deletedKeys: { type: 'integer' } }, ['deletedKeys']),
  uses: ['apis', 'keys'],
  async handle(deps, caller, input: DeleteKeysInput): Promise<{ deletedKeys: number }> {
    const ws = caller.rootKey.workspaceId;
    const api = await deps.apis.get(ws, input.apiId);
    if (!api || api.deletedAt !== undefined)
      throw new NotFoundError('api', `api ${input.apiId} not found`);
    caller.logFields.apiId = input.apiId;
    return {
      deletedKeys: await purgeKeys(deps, ws, input.apiId, (keyId) =>
        auditEntry(caller, 'apis.deleteKeys', 'key', keyId, { apiId: input.apiId }),
      ),
    };
  },
});
