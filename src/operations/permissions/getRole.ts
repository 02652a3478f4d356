import { defineOperation } from '../operation';
import { object } from '../schemas';
import { exactlyOneRole, notFound, roleHandles, roleIdOf, type RoleHandle } from './handles';
import { roleOutput } from './schemas';
import {
  rolePermissionIds,
  rolePermissionNames,
  roleView,
  withPermissionRecords,
  type RoleView,
} from './views';

export const getRole = defineOperation({
  name: 'permissions.getRole',
  method: 'GET',
  plane: 'management',
  summary: 'A role by its id or by its name (exactly one of them).',
  permission: { resource: 'rbac', action: 'read_role', scope: 'any' },
  input: object(roleHandles),
  check: exactlyOneRole,
  output: roleOutput,
  uses: ['rbac'],
  async handle(deps, caller, input: RoleHandle): Promise<RoleView> {
    const ws = caller.rootKey.workspaceId;
    const found = await deps.rbac.getRole(ws, await roleIdOf(deps.rbac, ws, input));
    if (!found) throw notFound('roles', { id: input.roleId, name: input.name });
    const catalogue = await deps.rbac.catalogue(ws);
    const records = await Promise.all(
      rolePermissionIds(catalogue, found.id).map((id) => deps.rbac.getPermission(ws, id)),
    );
    return withPermissionRecords(
      roleView(found, rolePermissionNames(catalogue, found.id)),
      catalogue,
      records.filter((record) => record !== undefined),
    );
  },
});
