import { permissionFor } from '../../auth/permissions';
import { carryOut, namedRefs, planLinks } from '../keys/links';
import { auditEntry } from '../audit';
import { defineOperation, requirePermission } from '../operation';
import { id, object } from '../schemas';
import { notFound } from './handles';
import { permissionName, permissionOutput } from './schemas';
import { permissionView, rolePermissionIds, type PermissionView } from './views';

interface SetRolePermissionsInput {
  roleId: string;
  /** Names of the permissions the role is to hold, and only those; `[]` takes all away. */
  permissions: string[];
}

/**
 * Replaces what a role holds (Unkey v2's permissions.setRolePermissions), as keys.setPermissions
 * does for a key: names that exist are linked, missing ones created (rbac.*.create_permission),
 * and taking one away needs rbac.*.remove_permission_from_role; all checked before any write.
 */
export const setRolePermissions = defineOperation({
  name: 'permissions.setRolePermissions',
  method: 'POST',
  plane: 'management',
  summary:
    "Sets a role's permissions, by name, to those named and only those (missing ones are created with rbac.*.create_permission).",
  permission: { resource: 'rbac', action: 'add_permission_to_role', scope: 'any' },
  input: object(
    {
      roleId: id,
      permissions: { type: 'array', maxItems: 100, items: permissionName },
    },
    ['roleId', 'permissions'],
  ),
  output: { type: 'array', items: permissionOutput },
  uses: ['rbac', 'now'],
  async handle(deps, caller, input: SetRolePermissionsInput): Promise<PermissionView[]> {
    const ws = caller.rootKey.workspaceId;
    const role = await deps.rbac.getRole(ws, input.roleId);
    if (!role) throw notFound('roles', { id: input.roleId });
    const catalogue = await deps.rbac.catalogue(ws);
    const plan = planLinks(caller, 'permissions', namedRefs(input.permissions), catalogue);
    const kept = new Set(plan.existing.map((link) => link.id));
    if (rolePermissionIds(catalogue, role.id).some((held) => !kept.has(held))) {
      requirePermission(caller, permissionFor('rbac', '*', 'remove_permission_from_role'));
    }
    const linked = await carryOut(deps, caller, plan, 'permissions.setRolePermissions');
    const ids = linked.map((link) => link.id);
    const audit = auditEntry(caller, 'permissions.setRolePermissions', 'role', role.id, {
      name: role.name,
      permissionIds: ids,
    });
    if (!(await deps.rbac.setRolePermissions(ws, role.id, ids, audit))) {
      throw notFound('roles', { id: input.roleId });
    }
    const records = await Promise.all(
      ids.map((permission) => deps.rbac.getPermission(ws, permission)),
    );
    return records
      .flatMap((record) => (record ? [permissionView(record)] : []))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  },
});
