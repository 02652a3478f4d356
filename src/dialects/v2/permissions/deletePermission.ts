import { deletePermission } from '../../../operations/permissions/deletePermission';
import { empty, object, text } from '../../../operations/schemas';
import { defineV2Route } from '../route';
import { permissionHandle } from './shapes';

export const v2DeletePermission = defineV2Route({
  name: 'permissions.deletePermission',
  operation: deletePermission,
  input: object({ permission: text }, ['permission']),
  output: empty,
  toInput: (body: { permission: string }) => permissionHandle(body.permission),
  toBody: () => ({ data: {} }),
});
