import { NotFoundError } from '../../errors';
import { permissionFor } from '../../auth/permissions';
import type { KeyRecord } from '../../domain/key';
import { defineOperation, requirePermission, type Caller } from '../operation';
import { permissionName, roleName } from '../permissions/schemas';
import type { Services } from '../services';
import {
  carryOut,
  checkRefs,
  linkRef,
  namedRefs,
  planLinks,
  requireRemovalOfOthers,
  type LinkPlan,
  type LinkRef,
} from './links';
import {
  empty,
  environment,
  expires,
  id,
  meta,
  namedLimits,
  nullable,
  ratelimit,
  refill,
  remaining,
  text,
} from '../schemas';
import { toKeyFields, type KeyFieldsInput } from './fields';
import { linkIdentity } from './identityLink';
import { loadKey } from './loadKey';
import { auditEntry, changedFields } from '../audit';

type UpdateKeyInput = KeyFieldsInput & {
  keyId: string;
  /** v1's `{ id } | { name, create? }`, or a name alone (v2's form: created when missing). */
  permissions?: (string | LinkRef)[];
  roles?: (string | LinkRef)[];
};

/** One item of `permissions` or `roles`: a name (v2), or a ref (Unkey v1's updateKey). */
const holding = (name: object) => ({ if: { type: 'string' }, then: name, else: linkRef });

const ADD = { permissions: 'add_permission_to_key', roles: 'add_role_to_key' } as const;

/** The key's permissions and roles as updateKey replaces them, planned without writing. */
async function planReplacements(
  deps: Pick<Services, 'rbac'>,
  caller: Caller,
  key: KeyRecord,
  input: UpdateKeyInput,
): Promise<LinkPlan[]> {
  const kinds = (['permissions', 'roles'] as const).filter((kind) => input[kind] !== undefined);
  if (kinds.length === 0) return [];
  const catalogue = await deps.rbac.catalogue(key.workspaceId);
  return kinds.map((kind) => {
    requirePermission(caller, permissionFor('rbac', '*', ADD[kind]));
    const plan = planLinks(caller, kind, namedRefs(input[kind]), catalogue);
    requireRemovalOfOthers(caller, key, kind, plan.existing);
    return plan;
  });
}

const updateKeyInput = {
  type: 'object',
  required: ['keyId'],
  properties: {
    keyId: id,
    name: nullable(text),
    ownerId: nullable(text),
    externalId: nullable(text),
    meta: nullable(meta),
    expires: nullable(expires),
    environment: nullable(environment),
    ratelimit: { ...ratelimit, type: ['object', 'null'] },
    ratelimits: { ...namedLimits, type: ['array', 'null'] },
    // 0 is allowed here, as updateRemaining's `set 0` is: a key can be used up on purpose.
    remaining: nullable({ ...remaining, minimum: 0 }),
    refill: { ...refill, type: ['object', 'null'] },
    enabled: { type: 'boolean' },
    // Replacing what the key holds, as Unkey v1's updateKey (its setPermissions/setRoles).
    permissions: { type: 'array', maxItems: 100, items: holding(permissionName) },
    roles: { type: 'array', maxItems: 100, items: holding(roleName) },
  },
} as const;

export const updateKey = defineOperation({
  name: 'keys.updateKey',
  method: 'POST',
  plane: 'management',
  summary: 'Changes a key: an absent field is unchanged, null clears it.',
  permission: { resource: 'api', action: 'update_key', scope: 'resource' },
  input: updateKeyInput,
  output: empty,
  uses: ['keys', 'directory', 'now', 'rbac', 'identities'],
  check(input: UpdateKeyInput) {
    checkRefs('permissions', input.permissions);
    checkRefs('roles', input.roles);
  },
  async handle(deps, caller, input: UpdateKeyInput): Promise<Record<string, never>> {
    const key = await loadKey(deps, caller, input.keyId, 'update_key');
    const now = deps.now();
    const fields = toKeyFields(input, now, key.credits !== undefined);
    // Every refusal (an unknown name it may not create, a removal it may not make) comes before
    // the first write; then what the key holds, then its record.
    const plans = await planReplacements(deps, caller, key, input);
    for (const plan of plans) {
      const ids = (await carryOut(deps, caller, plan, 'keys.updateKey')).map((l) => l.id);
      // A step of its own before the record's, so an entry of its own: what the key now holds.
      const held = plan.kind === 'permissions' ? 'permissionIds' : 'roleIds';
      await deps.rbac.changeKeyLinks(
        key.workspaceId,
        key,
        plan.kind,
        'set',
        ids,
        auditEntry(caller, 'keys.updateKey', 'key', key.id, { apiId: key.apiId, [held]: ids }),
      );
    }
    const audit = auditEntry(caller, 'keys.updateKey', 'key', key.id, {
      apiId: key.apiId,
      fields: changedFields(updateKeyInput, input, ['keyId']),
    });
    await linkIdentity(deps, key.workspaceId, fields, now, { create: audit });
    // One atomic record write, a new `remaining` included (the credits hash applies it when next
    // used); a hash left behind by `remaining: null` is merely tidied up afterwards.
    const updated = await deps.keys.update(key.workspaceId, key.id, fields, now, audit);
    if (!updated) throw new NotFoundError('key', `key ${input.keyId} not found`);
    if (input.remaining === null) await deps.keys.deleteCredits(key.id);
    return {};
  },
});
