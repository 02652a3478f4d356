import { defineOperation } from '../operation';
import { empty, id, object } from '../schemas';
import { identityNotFound, loadIdentity } from './loadIdentity';

export const deleteIdentity = defineOperation({
  name: 'identities.deleteIdentity',
  method: 'POST',
  plane: 'management',
  summary:
    'Deletes an identity and frees its externalId; keys that named it no longer resolve one.',
  permission: { resource: 'identity', action: 'delete_identity', scope: 'resource' },
  input: object({ identityId: id }, ['identityId']),
  output: empty,
  uses: ['identities'],
  async handle(deps, caller, input: { identityId: string }): Promise<Record<string, never>> {
    const identity = await loadIdentity(deps, caller, input, 'delete_identity');
    if (!(await deps.identities.delete(caller.rootKey.workspaceId, identity.id))) {
      throw identityNotFound(input);
    }
    return {};
  },
});
