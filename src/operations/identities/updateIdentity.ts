import { defineOperation } from '../operation';
import { meta, namedLimits, object } from '../schemas';
import { identityChanges, type IdentityFieldsInput } from './fields';
import {
  exactlyOneIdentity,
  identityNotFound,
  loadIdentity,
  type IdentityHandle,
} from './loadIdentity';
import { identityHandles, identityOutput } from './schemas';
import { identityView, type IdentityView } from './views';
import { auditEntry, changedFields } from '../audit';

type UpdateIdentityInput = IdentityHandle & IdentityFieldsInput;

const updateIdentityInput = object({ ...identityHandles, meta, ratelimits: namedLimits });

export const updateIdentity = defineOperation({
  name: 'identities.updateIdentity',
  method: 'POST',
  plane: 'management',
  summary:
    "Replaces an identity's meta and/or its whole list of rate limits; answers the identity after the update.",
  permission: { resource: 'identity', action: 'update_identity', scope: 'resource' },
  input: updateIdentityInput,
  output: identityOutput,
  uses: ['identities', 'now'],
  check(input: UpdateIdentityInput) {
    exactlyOneIdentity(input);
    identityChanges(input);
  },
  async handle(deps, caller, input: UpdateIdentityInput): Promise<IdentityView> {
    const identity = await loadIdentity(deps, caller, input, 'update_identity');
    const changes = identityChanges(input);
    // Nothing to replace: nothing written, nothing for the nodes to drop.
    if (changes.meta === undefined && changes.ratelimits === undefined) {
      return identityView(identity);
    }
    const updated = await deps.identities.update(
      caller.rootKey.workspaceId,
      identity.id,
      changes,
      deps.now(),
      auditEntry(caller, 'identities.updateIdentity', 'identity', identity.id, {
        externalId: identity.externalId,
        fields: changedFields(updateIdentityInput, changes, []),
      }),
    );
    // Deleted since it was loaded.
    if (!updated) throw identityNotFound(input);
    return identityView(updated);
  },
});
