import { deleteRole } from '../../../operations/permissions/deleteRole';
import { empty, object, text } from '../../../operations/schemas';
import { defineV2Route } from '../route';
import { roleHandle } from './shapes';

export const v2DeleteRole = defineV2Route({
  name: 'permissions.deleteRole',
  operation: deleteRole,
  input: object({ role: text }, ['role']),
  output: empty,
  toInput: (body: { role: string }) => roleHandle(body.role),
  toBody: () => ({ data: {} }),
});
