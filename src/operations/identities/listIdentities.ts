import { defineOperation } from '../operation';
import { id, object, page, pageLimit } from '../schemas';
import { listedIdentityOutput } from './schemas';
import { LISTED_META, listedIdentityView, type ListedIdentityView } from './views';

/**
 * Unkey v1 pages by id after the cursor, as here; its `environment` is not declared: every
 * identity is in Unkey's `default` one (docs/decisions.md).
 */
export const listIdentities = defineOperation({
  name: 'identities.listIdentities',
  method: 'GET',
  plane: 'management',
  summary: "The workspace's identities in id (creation) order, a page at a time, with the total.",
  permission: { resource: 'identity', action: 'read_identity', scope: 'any' },
  input: object({ limit: pageLimit, cursor: id }),
  output: page('identities', listedIdentityOutput),
  uses: ['identities'],
  async handle(
    deps,
    caller,
    input: { limit?: number; cursor?: string },
  ): Promise<{ identities: ListedIdentityView[]; cursor?: string; total: number }> {
    const found = await deps.identities.list(caller.rootKey.workspaceId, {
      limit: input.limit ?? 100,
      ...(input.cursor !== undefined ? { afterId: input.cursor } : {}),
    });
    return {
      identities: found.identities.map((identity) => ({
        ...listedIdentityView(identity),
        [LISTED_META]: identity.meta ?? {},
      })),
      total: found.total,
      ...(found.next !== undefined ? { cursor: found.next } : {}),
    };
  },
});
