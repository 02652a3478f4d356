import { defineOperation } from '../operation';
import { object } from '../schemas';
import { permissionOutput } from './schemas';
import { permissionView, type PermissionView } from './views';

/** Unkey v1 answers the whole list, as an array, oldest first. */
export const listPermissions = defineOperation({
  name: 'permissions.listPermissions',
  method: 'GET',
  plane: 'management',
  summary: "The workspace's permissions, oldest first.",
  permission: { resource: 'rbac', action: 'read_permission', scope: 'any' },
  input: object({}),
  output: { type: 'array', items: permissionOutput },
  uses: ['rbac'],
  async handle(deps, caller): Promise<PermissionView[]> {
    return (await deps.rbac.listPermissions(caller.rootKey.workspaceId)).map(permissionView);
  },
});
