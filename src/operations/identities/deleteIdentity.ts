import { invalidField } from '../../errors';
import { defineOperation } from '../operation';
import { empty, object } from '../schemas';
import {
  exactlyOneIdentity,
  identityNotFound,
  loadIdentity,
  type IdentityHandle,
} from './loadIdentity';
import { identityHandles } from './schemas';
import { auditEntry } from '../audit';

export const deleteIdentity = defineOperation({
  name: 'identities.deleteIdentity',
  method: 'POST',
  plane: 'management',
  summary:
    'Deletes an identity, named by its id or its externalId; keys that named it no longer resolve one.',
  permission: { resource: 'identity', action: 'delete_identity', scope: 'resource' },
  input: object(identityHandles),
  check(input: IdentityHandle) {
    // Unkey v1 takes identityId alone: neither is the 400 its schema gave.
    if (input.identityId === undefined && input.externalId === undefined) {
      throw invalidField(['identityId'], 'is required');
    }
    exactlyOneIdentity(input);
  },
  output: empty,
  uses: ['identities'],
  async handle(deps, caller, input: IdentityHandle): Promise<Record<string, never>> {
    const identity = await loadIdentity(deps, caller, input, 'delete_identity');
    if (
      !(await deps.identities.delete(
        caller.rootKey.workspaceId,
        identity.id,
        auditEntry(caller, 'identities.deleteIdentity', 'identity', identity.id, {
          externalId: identity.externalId,
        }),
      ))
    ) {
      throw identityNotFound(input);
    }
    return {};
  },
});
