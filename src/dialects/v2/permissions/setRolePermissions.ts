import { permissionName } from '../../../operations/permissions/schemas';
import { setRolePermissions } from '../../../operations/permissions/setRolePermissions';
import type { PermissionView } from '../../../operations/permissions/views';
import { object } from '../../../operations/schemas';
import { defineV2Route } from '../route';
import { permissionOutput, v2Permission } from './shapes';

export const v2SetRolePermissions = defineV2Route({
  name: 'permissions.setRolePermissions',
  operation: setRolePermissions,
  input: object(
    {
      // Unkey's ResourceIdentifier.
      roleId: { type: 'string', minLength: 3, maxLength: 255, pattern: '^[a-zA-Z0-9_-]+$' },
      permissions: { type: 'array', maxItems: 100, items: permissionName },
    },
    ['roleId', 'permissions'],
  ),
  output: { type: 'array', items: permissionOutput },
  toInput: (body: { roleId: string; permissions: string[] }) => ({
    roleId: body.roleId,
    permissions: body.permissions,
  }),
  toBody: (views: PermissionView[]) => ({ data: views.map(v2Permission) }),
});
