import { defineOperation } from '../operation';
import { object } from '../schemas';
import { roleOutput } from './schemas';
import { rolePermissionNames, roleView, withPermissionRecords, type RoleView } from './views';

/** Unkey v1 answers the whole list, as an array, oldest first. */
export const listRoles = defineOperation({
  name: 'permissions.listRoles',
  method: 'GET',
  plane: 'management',
  summary: "The workspace's roles, oldest first.",
  permission: { resource: 'rbac', action: 'read_role', scope: 'any' },
  input: object({}),
  output: { type: 'array', items: roleOutput },
  uses: ['rbac'],
  async handle(deps, caller): Promise<RoleView[]> {
    const ws = caller.rootKey.workspaceId;
    const [roles, catalogue, permissions] = await Promise.all([
      deps.rbac.listRoles(ws),
      deps.rbac.catalogue(ws),
      deps.rbac.listPermissions(ws),
    ]);
    return roles.map((role) =>
      withPermissionRecords(
        roleView(role, rolePermissionNames(catalogue, role.id)),
        catalogue,
        permissions,
      ),
    );
  },
});
