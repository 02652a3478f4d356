import { auditEntry } from '../audit';
import { defineOperation } from '../operation';
import { empty, object } from '../schemas';
import {
  exactlyOnePermission,
  notFound,
  permissionHandles,
  permissionIdOf,
  type PermissionHandle,
} from './handles';

export const deletePermission = defineOperation({
  name: 'permissions.deletePermission',
  method: 'POST',
  plane: 'management',
  summary: 'Deletes a permission, named by its id or its name; no key or role holds it any more.',
  permission: { resource: 'rbac', action: 'delete_permission', scope: 'any' },
  input: object(permissionHandles),
  check: exactlyOnePermission,
  output: empty,
  uses: ['rbac'],
  async handle(deps, caller, input: PermissionHandle): Promise<Record<string, never>> {
    const ws = caller.rootKey.workspaceId;
    const id = await permissionIdOf(deps.rbac, ws, input);
    const audit = auditEntry(caller, 'permissions.deletePermission', 'permission', id, {
      ...(input.name !== undefined ? { name: input.name } : {}),
    });
    if (!(await deps.rbac.deletePermission(ws, id, audit))) {
      throw notFound('permissions', { id: input.permissionId, name: input.name });
    }
    return {};
  },
});
