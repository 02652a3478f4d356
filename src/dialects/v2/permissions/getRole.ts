import { getRole } from '../../../operations/permissions/getRole';
import { object, text } from '../../../operations/schemas';
import { defineV2Route } from '../route';
import { roleHandle, roleOutput, v2Role } from './shapes';

export const v2GetRole = defineV2Route({
  name: 'permissions.getRole',
  operation: getRole,
  input: object({ role: text }, ['role']),
  output: roleOutput,
  toInput: (body: { role: string }) => roleHandle(body.role),
  toBody: (view) => ({ data: v2Role(view) }),
});
