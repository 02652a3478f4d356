import { NotFoundError } from '../../errors';
import { defineOperation } from '../operation';
import { apiOutput, id } from '../schemas';
import { apiView, type ApiView } from '../views';

export const getApi = defineOperation({
  name: 'apis.getApi',
  method: 'GET',
  plane: 'management',
  summary: 'An API by its id.',
  permission: {
    resource: 'api',
    action: 'read_api',
    scope: 'input',
    ids: (input: { apiId: string }) => [input.apiId],
  },
  input: { type: 'object', required: ['apiId'], properties: { apiId: id } },
  output: apiOutput,
  uses: ['apis'],
  async handle(deps, caller, input: { apiId: string }): Promise<ApiView> {
    const api = await deps.apis.get(caller.rootKey.workspaceId, input.apiId);
    if (!api || api.deletedAt !== undefined)
      throw new NotFoundError('api', `api ${input.apiId} not found`);
    return apiView(api);
  },
});
