import { createRole } from '../../../operations/permissions/createRole';
import { description, permissionName, roleName } from '../../../operations/permissions/schemas';
import { object } from '../../../operations/schemas';
import { defineV2Route } from '../route';

interface V2CreateRoleBody {
  name: string;
  description?: string;
  permissions?: string[];
}

export const v2CreateRole = defineV2Route({
  name: 'permissions.createRole',
  operation: createRole,
  input: object(
    {
      name: roleName,
      description,
      permissions: { type: 'array', maxItems: 100, items: permissionName },
    },
    ['name'],
  ),
  output: object({ roleId: { type: 'string' } }, ['roleId']),
  toInput: (body: V2CreateRoleBody) => ({
    name: body.name,
    ...(body.description !== undefined ? { description: body.description } : {}),
    ...(body.permissions !== undefined ? { permissions: body.permissions } : {}),
  }),
  toBody: (created) => ({ data: { roleId: created.roleId } }),
});
