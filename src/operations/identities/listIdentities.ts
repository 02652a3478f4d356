import { defineOperation } from '../operation';
import { id, object, page, pageLimit, text } from '../schemas';
import { listedIdentityOutput } from './schemas';
import { LISTED_META, listedIdentityView, type ListedIdentityView } from './views';

interface ListIdentitiesInput {
  environment?: string;
  limit?: number;
  cursor?: string;
}

/**
 * Unkey's environment of every identity: its v1 createIdentity (and a key's externalId) makes
 * them all in `default`, and so does keyward, which stores none.
 */
const DEFAULT_ENVIRONMENT = 'default';

const environmentOf = (input: ListIdentitiesInput) => input.environment ?? DEFAULT_ENVIRONMENT;

/**
 * Unkey v1 pages by id after the cursor, as here, and lists one environment's identities
 * (`default` unless named), with `identity.<environment>.read_identity` or
 * `identity.*.read_identity` (docs/decisions.md).
 */
export const listIdentities = defineOperation({
  name: 'identities.listIdentities',
  method: 'GET',
  plane: 'management',
  summary: "The workspace's identities in id (creation) order, a page at a time, with the total.",
  permission: {
    resource: 'identity',
    action: 'read_identity',
    scope: 'input',
    ids: (input: ListIdentitiesInput) => [environmentOf(input)],
  },
  input: object({ environment: text, limit: pageLimit, cursor: id }),
  output: page('identities', listedIdentityOutput),
  uses: ['identities'],
  async handle(
    deps,
    caller,
    input: ListIdentitiesInput,
  ): Promise<{ identities: ListedIdentityView[]; cursor?: string; total: number }> {
    // Every identity is in `default`: another environment holds none.
    if (environmentOf(input) !== DEFAULT_ENVIRONMENT) return { identities: [], total: 0 };
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
