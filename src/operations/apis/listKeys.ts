import { invalidField, NotFoundError } from '../../errors';
import { defineOperation } from '../operation';
import { id, keyOutput, page, pageLimit, text } from '../schemas';
import type { KeyView } from '../views';
import { viewWithCredits } from '../keys/credits';
import { ownerIdOf } from '../keys/fields';
import { openKey, vaultToOpen } from '../keys/recoverable';

const CURSOR = /^\d{1,15}$/;

export interface KeysPage {
  keys: KeyView[];
  cursor?: string;
  total: number;
}

interface ListKeysInput {
  apiId: string;
  limit?: number;
  cursor?: string;
  ownerId?: string;
  externalId?: string;
  /** Answer recoverable keys' plaintexts too (`api.<apiId>.decrypt_key`). */
  decrypt?: boolean;
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
      decrypt: { type: 'boolean' },
    },
  },
  output: page('keys', keyOutput),
  uses: ['apis', 'keys', 'identities', 'now', 'directory', 'vault', 'metrics'],
  async handle(deps, caller, input: ListKeysInput): Promise<KeysPage> {
    if (input.cursor !== undefined && !CURSOR.test(input.cursor)) {
      throw invalidField(['cursor'], 'is not a cursor this server returned');
    }
    const ws = caller.rootKey.workspaceId;
    const vault = input.decrypt ? vaultToOpen(deps, caller, input.apiId) : undefined;
    const api = await deps.apis.get(ws, input.apiId);
    if (!api || api.deletedAt !== undefined)
      throw new NotFoundError('api', `api ${input.apiId} not found`);
    const ownerId = ownerIdOf(input) ?? undefined;
    // The identity's keys, made under its name or one it had before a rename (not those of
    // another identity that had this name). No identity of the name: keys labelled with it.
    const identity =
      ownerId === undefined ? undefined : await deps.identities.byExternalId(ws, ownerId);
    const found = await deps.keys.list(ws, input.apiId, {
      limit: input.limit ?? 100,
      ...(input.cursor !== undefined ? { afterSeq: Number(input.cursor) } : {}),
      ...(identity
        ? {
            owners: {
              names: [identity.externalId, ...(identity.formerExternalIds ?? [])],
              identityId: identity.id,
            },
          }
        : ownerId !== undefined
          ? { ownerId }
          : {}),
    });
    return {
      keys: await Promise.all(
        found.keys.map(async (key) => {
          const view = await viewWithCredits(deps, key, 'effective');
          const plaintext = vault && (await openKey(deps, vault, caller, key, 'apis.listKeys'));
          return plaintext === undefined ? view : { ...view, plaintext };
        }),
      ),
      total: found.total,
      ...(found.more && found.lastSeq !== undefined ? { cursor: String(found.lastSeq) } : {}),
    };
  },
});
