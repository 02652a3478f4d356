import { ConflictError } from '../../errors';
import { newId } from '../../keys/ids';
import { carryOut, namedRefs, planLinks } from '../keys/links';
import { auditEntry } from '../audit';
import { defineOperation, requirePermission } from '../operation';
import { permissionFor } from '../../auth/permissions';
import { object } from '../schemas';
import { description, permissionName, roleName } from './schemas';

interface CreateRoleInput {
  name: string;
  description?: string;
  /** Names of the role's permissions, as Unkey v2's createRole takes them. */
  permissions?: string[];
}

export const createRole = defineOperation({
  name: 'permissions.createRole',
  method: 'POST',
  plane: 'management',
  summary:
    'Creates a role: a named group of permissions, given by name (with rbac.*.add_permission_to_role; missing ones are created with rbac.*.create_permission).',
  permission: { resource: 'rbac', action: 'create_role', scope: 'any' },
  input: object(
    {
      name: roleName,
      description,
      permissions: { type: 'array', maxItems: 100, items: permissionName },
    },
    ['name'],
  ),
  output: object({ roleId: { type: 'string' } }, ['roleId']),
  uses: ['rbac', 'now'],
  async handle(deps, caller, input: CreateRoleInput): Promise<{ roleId: string }> {
    const ws = caller.rootKey.workspaceId;
    const now = deps.now();
    // Giving the new role permissions is what setRolePermissions does, and needs what it needs.
    if ((input.permissions ?? []).length > 0) {
      requirePermission(caller, permissionFor('rbac', '*', 'add_permission_to_role'));
    }
    const taken = () =>
      new ConflictError('role', `Role with name "${input.name}" already exists in this workspace`);
    // Every refusal before the first write: a taken name, or a permission it may not create.
    if ((await deps.rbac.idsByName(ws, 'roles', [input.name])).size > 0) throw taken();
    const plan = planLinks(
      caller,
      'permissions',
      namedRefs(input.permissions),
      await deps.rbac.catalogue(ws),
    );
    const permissionIds = (await carryOut(deps, caller, plan, 'permissions.createRole')).map(
      (link) => link.id,
    );
    const roleId = newId('role', now);
    const outcome = await deps.rbac.createRole(
      {
        id: roleId,
        workspaceId: ws,
        name: input.name,
        ...(input.description ? { description: input.description } : {}),
        createdAt: now,
      },
      permissionIds,
      auditEntry(caller, 'permissions.createRole', 'role', roleId, {
        name: input.name,
        permissionIds,
      }),
    );
    if (outcome === 'name_taken') throw taken();
    return { roleId };
  },
});
