import { NotFoundError } from '../../errors';
import { defineOperation } from '../operation';
import { empty, id, object } from '../schemas';

export const deleteRole = defineOperation({
  name: 'permissions.deleteRole',
  method: 'POST',
  plane: 'management',
  summary: 'Deletes a role; no key holds it any more.',
  permission: { resource: 'rbac', action: 'delete_role', scope: 'any' },
  input: object({ roleId: id }, ['roleId']),
  output: empty,
  uses: ['rbac'],
  async handle(deps, caller, input: { roleId: string }): Promise<Record<string, never>> {
    if (!(await deps.rbac.deleteRole(caller.rootKey.workspaceId, input.roleId))) {
      throw new NotFoundError(`role ${input.roleId} not found`);
    }
    return {};
  },
});
