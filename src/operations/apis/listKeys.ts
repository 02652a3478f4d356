import { BadRequestError, NotFoundError } from '../../errors';
import { defineOperation } from '../operation';
import { id, keyOutput, page, pageLimit, text } from '../schemas';
import type { KeyView } from '../views';
import { viewWithCredits } from '../keys/credits';
import { ownerIdOf } from '../keys/fields';

const CURSOR = /^\d{1,15}$/;

interface ListKeysInput {
  apiId: string;
  limit?: number;
  cursor?: string;
  ownerId?: string;
  externalId?: string;
}

export const listKeys = defineOperation({
  name: 'apis.listKeys',
  method: 'GET',
  plane: 'management',
  summary: "An API's keys in creation order, a page at a time, with the exact total.",
  permission: {
    resource: 'api',
    action: 'read_key',
    scope: 'input',
    ids: (input: ListKeysInput) => [input.apiId],
  },
  input: {
    type: 'object',
    required: ['apiId'],
    properties: {
      apiId: id,
      limit: pageLimit,
      cursor: { type: 'string', minLength: 1, maxLength: 64 },
      ownerId: text,
      externalId: text,
    },
  },
  output: page('keys', keyOutput),
  uses: ['apis', 'keys', 'now', 'directory'],
  async handle(
    deps,
    caller,
    input: ListKeysInput,
  ): Promise<{ keys: KeyView[]; cursor?: string; total: number }> {
    if (input.cursor !== undefined && !CURSOR.test(input.cursor)) {
      throw new BadRequestError('cursor: is not a cursor this server returned');
    }
    const ws = caller.rootKey.workspaceId;
    const api = await deps.apis.get(ws, input.apiId);
    if (!api || api.deletedAt !== undefined)
      throw new NotFoundError(`api ${input.apiId} not found`);
    const ownerId = ownerIdOf(input) ?? undefined;
    const found = await deps.keys.list(ws, input.apiId, {
      limit: input.limit ?? 100,
      ...(input.cursor !== undefined ? { afterSeq: Number(input.cursor) } : {}),
      ...(ownerId !== undefined ? { ownerId } : {}),
    });
    return {
      keys: await Promise.all(found.keys.map((key) => viewWithCredits(deps, key, 'effective'))),
      total: found.total,
      ...(found.more && found.lastSeq !== undefined ? { cursor: String(found.lastSeq) } : {}),
    };
  },
});
