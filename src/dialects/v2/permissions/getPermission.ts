import { getPermission } from '../../../operations/permissions/getPermission';
import { object, text } from '../../../operations/schemas';
import { defineV2Route } from '../route';
import { permissionHandle, permissionOutput, v2Permission } from './shapes';

export const v2GetPermission = defineV2Route({
  name: 'permissions.getPermission',
  operation: getPermission,
  input: object({ permission: text }, ['permission']),
  output: permissionOutput,
  toInput: (body: { permission: string }) => permissionHandle(body.permission),
  toBody: (view) => ({ data: v2Permission(view) }),
});
