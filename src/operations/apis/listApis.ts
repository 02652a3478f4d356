import { defineOperation } from '../operation';
import { apiOutput, id, page, pageLimit } from '../schemas';
import { apiView, type ApiView } from '../views';

/** keyward's own addition (v1 has no such call): the dashboard lists APIs with it. */
export const listApis = defineOperation({
  name: 'apis.listApis',
  method: 'GET',
  plane: 'management',
  summary: "keyward's own: the workspace's APIs in creation order.",
  permission: { resource: 'api', action: 'read_api', scope: 'any' },
  input: { type: 'object', properties: { limit: pageLimit, cursor: id } },
  output: page('apis', apiOutput),
  uses: ['apis'],
  async handle(
    deps,
    caller,
    input: { limit?: number; cursor?: string },
  ): Promise<{ apis: ApiView[]; cursor?: string; total: number }> {
    const found = await deps.apis.list(caller.rootKey.workspaceId, {
      limit: input.limit ?? 100,
      ...(input.cursor !== undefined ? { afterId: input.cursor } : {}),
    });
    return {
      apis: found.apis.map(apiView),
      total: found.total,
      ...(found.next !== undefined ? { cursor: found.next } : {}),
    };
  },
});
