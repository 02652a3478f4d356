import { ConflictError, PreconditionFailedError } from '../../errors';
import { defineOperation } from '../operation';
import { meta, namedLimits, object } from '../schemas';
import type { IdentityChanges } from '../../domain/identity';
import { poolChanges, poolStanding } from './credits';
import { identityChanges, poolUpdateFields, type IdentityFieldsInput } from './fields';
import {
  exactlyOneIdentity,
  identityNotFound,
  loadIdentity,
  type IdentityHandle,
} from './loadIdentity';
import { identityHandles, identityOutput, newExternalId } from './schemas';
import { identityView, type IdentityView } from './views';
import { auditEntry, changedFields } from '../audit';

/**
 * The most names an identity keeps after renames: its keys made under each are listed under the
 * current one (listKeys reads one owner index per name).
 */
export const MAX_FORMER_EXTERNAL_IDS = 100;

type UpdateIdentityInput = IdentityHandle &
  IdentityFieldsInput & {
    /** The externalId the identity takes instead of its own; its keys stay linked. */
    newExternalId?: string;
  };

const updateIdentityInput = object({
  ...identityHandles,
  newExternalId,
  meta,
  ratelimits: namedLimits,
  ...poolUpdateFields,
});

export const updateIdentity = defineOperation({
  name: 'identities.updateIdentity',
  method: 'POST',
  plane: 'management',
  summary:
    "Replaces an identity's meta and/or its whole list of rate limits, sets or drops its credit pool, and renames it (newExternalId); answers the identity after the update.",
  permission: { resource: 'identity', action: 'update_identity', scope: 'resource' },
  input: updateIdentityInput,
  output: identityOutput,
  uses: ['identities', 'now'],
  check(input: UpdateIdentityInput) {
    exactlyOneIdentity(input);
    identityChanges(input);
  },
  async handle(deps, caller, input: UpdateIdentityInput): Promise<IdentityView> {
    const ws = caller.rootKey.workspaceId;
    const identity = await loadIdentity(deps, caller, input, 'update_identity');
    const now = deps.now();
    const pool = poolChanges(input, identity, now);
    const changes: IdentityChanges = {
      ...identityChanges(input),
      ...(pool !== undefined ? { credits: pool } : {}),
    };
    const renamed =
      input.newExternalId !== undefined && input.newExternalId !== identity.externalId
        ? input.newExternalId
        : undefined;
    // Nothing to replace: nothing written, nothing for the nodes to drop.
    if (
      changes.meta === undefined &&
      changes.ratelimits === undefined &&
      changes.credits === undefined &&
      renamed === undefined
    ) {
      return identityView(identity, await poolStanding(deps, identity));
    }
    const audit = auditEntry(caller, 'identities.updateIdentity', 'identity', identity.id, {
      externalId: identity.externalId,
      ...(renamed !== undefined ? { newExternalId: renamed } : {}),
      fields: changedFields(updateIdentityInput, { ...changes, newExternalId: renamed }, []),
    });
    if (renamed !== undefined) {
      const former = [
        ...(identity.formerExternalIds ?? []).filter((name) => name !== renamed),
        identity.externalId,
      ].filter((name, index, names) => names.indexOf(name) === index);
      if (former.length > MAX_FORMER_EXTERNAL_IDS) {
        throw new PreconditionFailedError(
          `identity ${identity.id} has had ${MAX_FORMER_EXTERNAL_IDS} other externalIds, the most ` +
            'keyward keeps (its keys are listed under each); create a new identity instead',
        );
      }
      changes.formerExternalIds = former;
    }
    // A rename's commit writes the record alone: a pool change follows it, as its own write.
    const { credits, ...recordOnly } = changes;
    let updated =
      renamed === undefined
        ? await deps.identities.update(ws, identity.id, changes, now, audit)
        : await deps.identities.rename(
            ws,
            identity.id,
            identity.externalId,
            renamed,
            recordOnly,
            now,
            audit,
          );
    if (renamed !== undefined && credits !== undefined && typeof updated === 'object') {
      updated = await deps.identities.update(ws, identity.id, { credits }, now, audit);
    }
    if (updated === 'external_id_taken') {
      throw new ConflictError(
        'identity',
        `Identity with externalId "${renamed}" already exists in this workspace`,
      );
    }
    if (updated === 'changed') {
      throw new ConflictError(
        undefined,
        `identity ${identity.id} was renamed by another request meanwhile: read it and retry`,
      );
    }
    // Deleted since it was loaded.
    if (!updated) throw identityNotFound(input);
    return identityView(updated, await poolStanding(deps, updated));
  },
});
