import { ConflictError } from '../../errors';
import { newId } from '../../keys/ids';
import { defineOperation } from '../operation';
import { meta, namedLimits, object } from '../schemas';
import { poolChanges } from './credits';
import { identityChanges, newPoolFields, type IdentityFieldsInput } from './fields';
import { newExternalId } from './schemas';
import { auditEntry, changedFields } from '../audit';

type CreateIdentityInput = IdentityFieldsInput & { externalId: string };

const createIdentityInput = object(
  { externalId: newExternalId, meta, ratelimits: namedLimits, ...newPoolFields },
  ['externalId'],
);

export const createIdentity = defineOperation({
  name: 'identities.createIdentity',
  method: 'POST',
  plane: 'management',
  summary:
    'Creates an identity: an externalId unique in the workspace, with meta, named rate limits and a pool of usage credits its keys share.',
  permission: { resource: 'identity', action: 'create_identity', scope: 'any' },
  input: createIdentityInput,
  output: object({ identityId: { type: 'string' } }, ['identityId']),
  uses: ['identities', 'now'],
  check(input: CreateIdentityInput) {
    identityChanges(input);
  },
  async handle(deps, caller, input: CreateIdentityInput): Promise<{ identityId: string }> {
    const now = deps.now();
    const identityId = newId('id', now);
    const pool = poolChanges(input, undefined, now);
    const outcome = await deps.identities.create(
      {
        id: identityId,
        workspaceId: caller.rootKey.workspaceId,
        externalId: input.externalId,
        ...identityChanges(input),
        ...(pool ? { credits: pool.record } : {}),
        createdAt: now,
      },
      auditEntry(caller, 'identities.createIdentity', 'identity', identityId, {
        externalId: input.externalId,
        fields: changedFields(createIdentityInput, input, ['externalId']),
      }),
    );
    if (outcome === 'external_id_taken') {
      throw new ConflictError(
        'identity',
        `Identity with externalId "${input.externalId}" already exists in this workspace`,
      );
    }
    return { identityId };
  },
});
