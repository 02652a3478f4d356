import { defineOperation } from '../operation';
import { object } from '../schemas';
import {
  exactlyOnePermission,
  notFound,
  permissionHandles,
  permissionIdOf,
  type PermissionHandle,
} from './handles';
import { permissionOutput } from './schemas';
import { permissionView, type PermissionView } from './views';

export const getPermission = defineOperation({
  name: 'permissions.getPermission',
  method: 'GET',
  plane: 'management',
  summary: 'A permission by its id or by its name (exactly one of them).',
  permission: { resource: 'rbac', action: 'read_permission', scope: 'any' },
  input: object(permissionHandles),
  check: exactlyOnePermission,
  output: permissionOutput,
  uses: ['rbac'],
  async handle(deps, caller, input: PermissionHandle): Promise<PermissionView> {
    const ws = caller.rootKey.workspaceId;
    const found = await deps.rbac.getPermission(ws, await permissionIdOf(deps.rbac, ws, input));
    if (!found) throw notFound('permissions', { id: input.permissionId, name: input.name });
    return permissionView(found);
  },
});
