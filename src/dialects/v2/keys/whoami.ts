import { whoami } from '../../../operations/keys/whoami';
import { object } from '../../../operations/schemas';
import { defineV2Route } from '../route';
import { v2Key } from '../shapes';

export const v2Whoami = defineV2Route({
  name: 'keys.whoami',
  operation: whoami,
  input: object({ key: { type: 'string', minLength: 1, maxLength: 512 } }, ['key']),
  output: { type: 'object' },
  toInput: (body: { key: string }) => ({ key: body.key }),
  toBody: (view) => ({ data: v2Key(view) }),
});
