import { auditEntry } from '../audit';
import { defineOperation } from '../operation';
import { empty, object } from '../schemas';
import { exactlyOneRole, notFound, roleHandles, roleIdOf, type RoleHandle } from './handles';

export const deleteRole = defineOperation({
  name: 'permissions.deleteRole',
  method: 'POST',
  plane: 'management',
  summary: 'Deletes a role, named by its id or its name; no key holds it any more.',
  permission: { resource: 'rbac', action: 'delete_role', scope: 'any' },
  input: object(roleHandles),
  check: exactlyOneRole,
  output: empty,
  uses: ['rbac'],
  async handle(deps, caller, input: RoleHandle): Promise<Record<string, never>> {
    const ws = caller.rootKey.workspaceId;
    const id = await roleIdOf(deps.rbac, ws, input);
    const audit = auditEntry(caller, 'permissions.deleteRole', 'role', id, {
      ...(input.name !== undefined ? { name: input.name } : {}),
    });
    if (!(await deps.rbac.deleteRole(ws, id, audit))) {
      throw notFound('roles', { id: input.roleId, name: input.name });
    }
    return {};
  },
});
