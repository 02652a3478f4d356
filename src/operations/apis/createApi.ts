import { newId } from '../../keys/ids';
import { defineOperation } from '../operation';
import { id, object, text } from '../schemas';
import { auditEntry } from '../audit';

export const createApi = defineOperation({
  name: 'apis.createApi',
  method: 'POST',
  plane: 'management',
  summary: 'Creates an API: the container of keys.',
  permission: { resource: 'api', action: 'create_api', scope: 'any' },
  input: { type: 'object', required: ['name'], properties: { name: text } },
  output: object({ apiId: id, name: text }, ['apiId', 'name']),
  uses: ['apis', 'now'],
  async handle(deps, caller, input: { name: string }): Promise<{ apiId: string; name: string }> {
    const now = deps.now();
    const apiId = newId('api', now);
    await deps.apis.create(
      {
        id: apiId,
        workspaceId: caller.rootKey.workspaceId,
        name: input.name,
        createdAt: now,
      },
      auditEntry(caller, 'apis.createApi', 'api', apiId, { name: input.name }),
    );
    caller.logFields.apiId = apiId;
    return { apiId, name: input.name };
  },
});
