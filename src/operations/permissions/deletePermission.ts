import { NotFoundError } from '../../errors';
import { defineOperation } from '../operation';
import { empty, id, object } from '../schemas';

export const deletePermission = defineOperation({
  name: 'permissions.deletePermission',
  method: 'POST',
  plane: 'management',
  summary: 'Deletes a permission; no key or role holds it any more.',
  permission: { resource: 'rbac', action: 'delete_permission', scope: 'any' },
  input: object({ permissionId: id }, ['permissionId']),
  output: empty,
  uses: ['rbac'],
  async handle(deps, caller, input: { permissionId: string }): Promise<Record<string, never>> {
    if (!(await deps.rbac.deletePermission(caller.rootKey.workspaceId, input.permissionId))) {
      throw new NotFoundError(`permission ${input.permissionId} not found`);
    }
    return {};
  },
});
