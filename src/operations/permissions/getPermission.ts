import { NotFoundError } from '../../errors';
import { defineOperation } from '../operation';
import { id, object } from '../schemas';
import { permissionOutput } from './schemas';
import { permissionView, type PermissionView } from './views';

export const getPermission = defineOperation({
  name: 'permissions.getPermission',
  method: 'GET',
  plane: 'management',
  summary: 'A permission by its id.',
  permission: { resource: 'rbac', action: 'read_permission', scope: 'any' },
  input: object({ permissionId: id }, ['permissionId']),
  output: permissionOutput,
  uses: ['rbac'],
  async handle(deps, caller, input: { permissionId: string }): Promise<PermissionView> {
    const found = await deps.rbac.getPermission(caller.rootKey.workspaceId, input.permissionId);
    if (!found) throw new NotFoundError(`permission ${input.permissionId} not found`);
    return permissionView(found);
  },
});
