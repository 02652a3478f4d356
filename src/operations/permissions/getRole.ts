import { NotFoundError } from '../../errors';
import { defineOperation } from '../operation';
import { id, object } from '../schemas';
import { roleOutput } from './schemas';
import { rolePermissionNames, roleView, type RoleView } from './views';

export const getRole = defineOperation({
  name: 'permissions.getRole',
  method: 'GET',
  plane: 'management',
  summary: 'A role by its id.',
  permission: { resource: 'rbac', action: 'read_role', scope: 'any' },
  input: object({ roleId: id }, ['roleId']),
  output: roleOutput,
  uses: ['rbac'],
  async handle(deps, caller, input: { roleId: string }): Promise<RoleView> {
    const ws = caller.rootKey.workspaceId;
    const found = await deps.rbac.getRole(ws, input.roleId);
    if (!found) throw new NotFoundError(`role ${input.roleId} not found`);
    return roleView(found, rolePermissionNames(await deps.rbac.catalogue(ws), found.id));
  },
});
